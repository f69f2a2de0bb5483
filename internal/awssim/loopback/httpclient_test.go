package loopback_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/loopback"
)

// TestLargeResponsesNeedNoRetry reads 100 large responses without retries;
// with the SDK's default HTTP client some of them lose the connection.
func TestLargeResponsesNeedNoRetry(t *testing.T) {
	svc, err := sim.New(sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	srv := httptest.NewServer(svc)
	defer srv.Close()
	client := ec2.NewFromConfig(aws.Config{
		Region: "us-west-2", BaseEndpoint: aws.String(srv.URL), RetryMaxAttempts: 1, HTTPClient: loopback.HTTPClient(),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOOPBACK", "secret", ""),
	})
	for i := 0; i < 100; i++ {
		if _, err := client.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}
