package provider

import (
	"fmt"
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// testAWSCluster is the EKS cluster the sandbox's local AWS registers for
// the sandbox's apiserver.
const testAWSCluster = "joist"

// awsSim is the sandbox's local AWS, which the provider reaches through the
// SDK's standard environment (AWS_ENDPOINT_URL and static credentials) that
// TestMain sets, as a user's provider would reach AWS.
func awsSim(t *testing.T) *awssim.Server {
	t.Helper()
	sim := testCluster.aws
	if sim == nil {
		t.Fatal("the test sandbox runs without its local AWS")
	}
	if got := sim.Options().ClusterName; got != testAWSCluster {
		t.Fatalf("the local AWS registers EKS cluster %q; these tests expect %q", got, testAWSCluster)
	}
	return sim
}

// awsProviderBlock configures the provider for the local AWS and the
// sandbox cluster.
func awsProviderBlock() string {
	return fmt.Sprintf(`
provider "joist" {
  cluster_name = %q
  aws = {
    region = "us-west-2"
  }
  kubernetes = {
    config_path = %q
  }
}
`, testAWSCluster, testCluster.kubeconfig)
}
