// Package conformance holds awssim to clients the project did not write:
// AWS's own service models, as Python's botocore ships them.
package conformance

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
)

const cluster = "conformance"

// caPEM stands in for the cluster's CA bundle: EKS returns it, nothing here
// connects with it.
const caPEM = "-----BEGIN CERTIFICATE-----\nY29uZm9ybWFuY2U=\n-----END CERTIFICATE-----\n"

// TestAWSServiceModels runs awsmodels.py against a fresh awssim: every
// operation awssim serves exists in the model, its input constraints are
// the model's and are enforced, and its responses parse against the model.
func TestAWSServiceModels(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on PATH: the check against AWS's service models needs it with boto3 (pip install boto3)")
	}
	if out, err := exec.Command(python, "-c", "import boto3, botocore").CombinedOutput(); err != nil {
		t.Skipf("python3 has no boto3/botocore (pip install boto3): %s", out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := awssim.Start(ctx, awssim.Options{ClusterName: cluster})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.EKS.RegisterCluster(eks.Cluster{Name: cluster, Endpoint: "https://127.0.0.1:6443", CertificateAuthorityPEM: []byte(caPEM)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EKS.RegisterCluster(eks.Cluster{Name: cluster + "-ipv6", Endpoint: "https://127.0.0.1:6443", CertificateAuthorityPEM: []byte(caPEM), IPFamily: "ipv6"}); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("awsmodels.py")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, python, script, "--endpoint", s.URL(), "--region", s.Options().Region, "--cluster", cluster)
	// Only awssim's settings: none of the machine's AWS configuration.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range s.Env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	out, err := cmd.CombinedOutput()
	t.Logf("awsmodels.py:\n%s", out)
	if err != nil {
		t.Fatalf("awssim differs from AWS's service models (%v): see the list above", err)
	}
}
