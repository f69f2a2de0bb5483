package operator

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// discoverCluster fills CLUSTER_ENDPOINT from eks:DescribeCluster when it
// is not set (a failure is fatal, as in Karpenter), and CLUSTER_CA_BUNDLE
// from that answer or else from the CA the controller trusts the API server
// with. The service CIDR is not resolved here: node classes resolve it when
// they need it, retrying and reporting failures in their status.
func discoverCluster(ctx context.Context, cfg aws.Config, s *Settings, restCfg *rest.Config) error {
	if s.ClusterEndpoint == "" {
		out, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(s.ClusterName)})
		if err != nil {
			return fmt.Errorf("CLUSTER_ENDPOINT is not set and eks:DescribeCluster %q failed: %w; set CLUSTER_ENDPOINT (--cluster-endpoint) or allow eks:DescribeCluster", s.ClusterName, err)
		}
		s.ClusterEndpoint = aws.ToString(out.Cluster.Endpoint)
		if s.ClusterEndpoint == "" {
			return fmt.Errorf("eks:DescribeCluster %q returned no endpoint; set CLUSTER_ENDPOINT (--cluster-endpoint)", s.ClusterName)
		}
		if s.ClusterCABundle == "" && out.Cluster.CertificateAuthority != nil {
			s.ClusterCABundle = aws.ToString(out.Cluster.CertificateAuthority.Data)
		}
	}
	if s.ClusterCABundle == "" {
		ca := restCfg.CAData
		if len(ca) == 0 && restCfg.CAFile != "" {
			var err error
			if ca, err = os.ReadFile(restCfg.CAFile); err != nil {
				return fmt.Errorf("CLUSTER_CA_BUNDLE is not set and the API server's CA %s cannot be read: %w; set CLUSTER_CA_BUNDLE (--cluster-ca-bundle)", restCfg.CAFile, err)
			}
		}
		s.ClusterCABundle = base64.StdEncoding.EncodeToString(ca)
	}
	return nil
}

// kubeDNSIP is the cluster IP of kube-system/kube-dns: nodes' default
// cluster DNS and the cluster's IP family. A cluster without the service
// (custom DNS) is not an error, as in Karpenter: "" is returned.
func kubeDNSIP(ctx context.Context, restCfg *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return "", err
	}
	svc, err := cs.CoreV1().Services("kube-system").Get(ctx, "kube-dns", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading kube-system/kube-dns: %w", err)
	}
	if net.ParseIP(svc.Spec.ClusterIP) == nil {
		return "", fmt.Errorf("kube-system/kube-dns has no cluster IP (%q)", svc.Spec.ClusterIP)
	}
	return svc.Spec.ClusterIP, nil
}
