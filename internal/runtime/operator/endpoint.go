package operator

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
)

// discoverCluster fills CLUSTER_ENDPOINT, CLUSTER_CA_BUNDLE and the service
// CIDR from eks:DescribeCluster when they are not known. Only a missing
// endpoint makes a failed call fatal.
func discoverCluster(ctx context.Context, cfg aws.Config, s *Settings) error {
	if s.ClusterEndpoint != "" && s.ClusterCABundle != "" && s.ClusterCIDR != "" {
		return nil
	}
	out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(s.ClusterName)})
	if err != nil {
		if s.ClusterEndpoint != "" {
			// The CA bundle and CIDR are optional; nodes then use defaults.
			return nil
		}
		return fmt.Errorf("CLUSTER_ENDPOINT is not set and eks:DescribeCluster %q failed: %w; set CLUSTER_ENDPOINT (--cluster-endpoint) or allow eks:DescribeCluster", s.ClusterName, err)
	}
	if s.ClusterEndpoint == "" {
		s.ClusterEndpoint = aws.ToString(out.Cluster.Endpoint)
	}
	if s.ClusterCABundle == "" && out.Cluster.CertificateAuthority != nil {
		s.ClusterCABundle = aws.ToString(out.Cluster.CertificateAuthority.Data)
	}
	if s.ClusterCIDR == "" && out.Cluster.KubernetesNetworkConfig != nil {
		s.ClusterCIDR = aws.ToString(out.Cluster.KubernetesNetworkConfig.ServiceIpv4Cidr)
	}
	if s.ClusterEndpoint == "" {
		return fmt.Errorf("eks:DescribeCluster %q returned no endpoint; set CLUSTER_ENDPOINT (--cluster-endpoint)", s.ClusterName)
	}
	return nil
}
