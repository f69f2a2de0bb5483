package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"

	"k8s.io/client-go/rest"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
)

// DiscoverKubernetesVersion returns a function that asks the API server for
// its minor version ("1.36"), for Settings.KubernetesVersionFunc.
func DiscoverKubernetesVersion(cfg *rest.Config) func() (string, error) {
	return func() (string, error) { return ami.ServerVersion(cfg) }
}

// EKSKubernetesVersion returns a function that asks eks:DescribeCluster
// for the cluster's minor version, for Settings.KubernetesVersionFunc: what
// Karpenter reads with EKS_CONTROL_PLANE set, where the API server's own
// version is not the EKS one.
func EKSKubernetesVersion(client *eks.Client, cluster string) func() (string, error) {
	return func() (string, error) {
		out, err := client.DescribeCluster(context.Background(), &eks.DescribeClusterInput{Name: aws.String(cluster)})
		if err != nil {
			return "", fmt.Errorf("EKS_CONTROL_PLANE is set and eks:DescribeCluster %q failed: %w", cluster, err)
		}
		if out.Cluster == nil || aws.ToString(out.Cluster.Version) == "" {
			return "", fmt.Errorf("EKS_CONTROL_PLANE is set and eks:DescribeCluster %q returned no version", cluster)
		}
		return aws.ToString(out.Cluster.Version), nil
	}
}
