package operator

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// The cluster's details at start: a missing endpoint comes from
// eks:DescribeCluster and its failure stops the start, naming the call; a
// set endpoint makes no call (the CA then comes from the API server's, and
// the service CIDR is left to the node classes).
func TestDiscoverCluster(t *testing.T) {
	ctx := context.Background()
	sim, err := testenv.Start(awssim.Options{ClusterName: "joist"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	kube := testenv.KubeFor(t)

	s := &Settings{ClusterName: "missing"}
	if err := discoverCluster(ctx, sim.Config, s, kube.Config); err == nil || !strings.Contains(err.Error(), "eks:DescribeCluster") || !strings.Contains(err.Error(), "CLUSTER_ENDPOINT") {
		t.Fatalf("unknown cluster without CLUSTER_ENDPOINT: err = %v, want one naming eks:DescribeCluster and CLUSTER_ENDPOINT", err)
	}

	if _, err := sim.EKS.RegisterCluster(eks.Cluster{Name: "joist", Endpoint: "https://10.0.0.1:443", CertificateAuthorityPEM: []byte("eks-ca")}); err != nil {
		t.Fatal(err)
	}
	s = &Settings{ClusterName: "joist"}
	if err := discoverCluster(ctx, sim.Config, s, kube.Config); err != nil {
		t.Fatal(err)
	}
	if s.ClusterEndpoint != "https://10.0.0.1:443" || s.ClusterCABundle != base64.StdEncoding.EncodeToString([]byte("eks-ca")) {
		t.Errorf("discovered endpoint %q, CA %q; want DescribeCluster's", s.ClusterEndpoint, s.ClusterCABundle)
	}

	before := sim.Requests().Count("eks", "DescribeCluster")
	s = &Settings{ClusterName: "missing", ClusterEndpoint: "https://example:443"}
	if err := discoverCluster(ctx, sim.Config, s, kube.Config); err != nil {
		t.Fatalf("CLUSTER_ENDPOINT set: %v", err)
	}
	if n := sim.Requests().Count("eks", "DescribeCluster") - before; n != 0 {
		t.Errorf("%d DescribeCluster calls with CLUSTER_ENDPOINT set, want none", n)
	}
	if s.ClusterCABundle != base64.StdEncoding.EncodeToString(kube.Config.CAData) || len(kube.Config.CAData) == 0 {
		t.Errorf("CA bundle %q, want the API server's CA the controller trusts", s.ClusterCABundle)
	}
}

// kube-system/kube-dns's cluster IP is read at start; a cluster without
// it is not an error for the caller to stop on, but reports why.
func TestKubeDNSIP(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	if ip, err := kubeDNSIP(ctx, kube.Config); err == nil || ip != "" {
		t.Fatalf("without kube-dns: %q, %v; want an error", ip, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-dns"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP}}},
	}
	if err := kube.Client.Create(ctx, svc); err != nil {
		t.Fatal(err)
	}
	ip, err := kubeDNSIP(ctx, kube.Config)
	if err != nil || ip == "" || ip != svc.Spec.ClusterIP {
		t.Fatalf("kube-dns IP = %q, %v; want the service's cluster IP %q", ip, err, svc.Spec.ClusterIP)
	}
}

// TestEKSControlPlaneReadsTheVersionFromEKS checks EKS_CONTROL_PLANE as
// Karpenter reads it: the Kubernetes version comes from eks:DescribeCluster
// (here 1.33, while the API server runs another), and otherwise from the
// API server.
func TestEKSControlPlaneReadsTheVersionFromEKS(t *testing.T) {
	sim, err := testenv.Start(awssim.Options{ClusterName: "joist"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	kube := testenv.KubeFor(t)
	if _, err := sim.EKS.RegisterCluster(eks.Cluster{Name: "joist", Endpoint: "https://10.0.0.1:443", CertificateAuthorityPEM: []byte("eks-ca"), Version: "1.33"}); err != nil {
		t.Fatal(err)
	}
	fromAPIServer, err := kubernetesVersionFunc(&Settings{ClusterName: "joist"}, sim.Config, kube.Config)()
	if err != nil {
		t.Fatal(err)
	}
	if fromAPIServer == "1.33" {
		t.Fatalf("the API server reports 1.33 too; the test cannot tell the sources apart")
	}
	got, err := kubernetesVersionFunc(&Settings{ClusterName: "joist", EKSControlPlane: true}, sim.Config, kube.Config)()
	if err != nil || got != "1.33" {
		t.Errorf("with EKS_CONTROL_PLANE: version %q, %v; want EKS's 1.33", got, err)
	}
	if _, err := kubernetesVersionFunc(&Settings{ClusterName: "missing", EKSControlPlane: true}, sim.Config, kube.Config)(); err == nil || !strings.Contains(err.Error(), "eks:DescribeCluster") {
		t.Errorf("with EKS_CONTROL_PLANE and an unknown cluster: err = %v, want one naming eks:DescribeCluster", err)
	}
}
