package awssim

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/loopback"
)

// Env returns the environment a process needs to reach this server through
// the SDK's standard configuration: endpoint, region and static credentials.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL":          s.URL(),
		"AWS_REGION":                s.opts.Region,
		"AWS_ACCESS_KEY_ID":         s.opts.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":     s.opts.SecretAccessKey,
		"AWS_EC2_METADATA_DISABLED": "true", // no instance metadata service on a workstation
	}
}

// AWSConfig returns an SDK configuration for this server: its endpoint for
// every service, the region and the static credentials, over loopback.HTTPClient.
// The SDK's default retryer stays on, as for any AWS endpoint.
func (s *Server) AWSConfig() aws.Config {
	return aws.Config{
		HTTPClient:   loopback.HTTPClient(),
		Region:       s.opts.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.opts.AccessKeyID, s.opts.SecretAccessKey, ""),
		BaseEndpoint: aws.String(s.URL()),
	}
}
