package provider

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
)

// testAWS is the local AWS the AWS-backed resources' tests share, started on
// first use and reached through the SDK's standard environment
// (AWS_ENDPOINT_URL and static credentials), as a user's provider would.
var testAWS struct {
	once sync.Once
	sim  *awssim.Server
	err  error
}

const testAWSCluster = "acc"

func awsSim(t *testing.T) *awssim.Server {
	t.Helper()
	testAWS.once.Do(func() {
		sim, err := awssim.Start(context.Background(), awssim.Options{ClusterName: testAWSCluster, Logger: logr.Discard()})
		if err != nil {
			testAWS.err = err
			return
		}
		for k, v := range sim.Env() {
			if err := os.Setenv(k, v); err != nil {
				testAWS.err = err
				return
			}
		}
		// The EKS cluster is the sandbox's apiserver.
		rc, err := clientcmd.BuildConfigFromFlags("", testCluster.kubeconfig)
		if err != nil {
			testAWS.err = err
			return
		}
		n := sim.EC2.Network()
		if _, err := sim.EKS.RegisterCluster(eks.Cluster{
			Name: testAWSCluster, Endpoint: rc.Host, CertificateAuthorityPEM: rc.CAData, Version: "1.36",
			VpcID: n.VpcID, SubnetIDs: n.PrivateSubnetIDs, SecurityGroupIDs: []string{n.NodeSecurityGroupID},
			ClusterSecurityGroupID: n.ClusterSecurityGroupID,
		}); err != nil {
			testAWS.err = err
			return
		}
		testAWS.sim = sim
	})
	if testAWS.err != nil {
		t.Fatalf("starting the local AWS: %v", testAWS.err)
	}
	return testAWS.sim
}

// awsProviderBlock configures the provider for the local AWS (and the
// sandbox cluster).
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
