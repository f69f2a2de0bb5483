package provider

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

const twoContextKubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://a.example.com"}
- name: b
  cluster: {server: "https://b.example.com"}
users:
- name: u
  user: {token: from-file}
contexts:
- name: ctx-a
  context: {cluster: a, user: u}
- name: ctx-b
  context: {cluster: b, user: u}
current-context: ctx-a
`

func TestKubernetesRestConfig(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(twoContextKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}

	cfg, err := (&kubernetesModel{ConfigPath: types.StringValue(path)}).restConfig(ctx)
	if err != nil || cfg.Host != "https://a.example.com" || cfg.BearerToken != "from-file" {
		t.Errorf("config_path: host %q token %q err %v; want the current context", cfg.Host, cfg.BearerToken, err)
	}
	cfg, err = (&kubernetesModel{ConfigPath: types.StringValue(path), ConfigContext: types.StringValue("ctx-b")}).restConfig(ctx)
	if err != nil || cfg.Host != "https://b.example.com" {
		t.Errorf("config_context ctx-b: host %q err %v", cfg.Host, err)
	}
	cfg, err = (&kubernetesModel{ConfigPath: types.StringValue(path), Token: types.StringValue("explicit")}).restConfig(ctx)
	if err != nil || cfg.BearerToken != "explicit" || cfg.Host != "https://a.example.com" {
		t.Errorf("explicit token over the kubeconfig: host %q token %q err %v", cfg.Host, cfg.BearerToken, err)
	}

	exec := &kubernetesModel{
		Host:                 types.StringValue("https://eks.example.com"),
		ClusterCACertificate: types.StringValue("-----BEGIN CERTIFICATE-----\n"),
		Exec: &execModel{
			APIVersion: types.StringValue("client.authentication.k8s.io/v1beta1"),
			Command:    types.StringValue("aws"),
			Args:       types.ListValueMust(types.StringType, []attr.Value{types.StringValue("eks"), types.StringValue("get-token"), types.StringValue("--cluster-name"), types.StringValue("demo")}),
			Env:        types.MapValueMust(types.StringType, map[string]attr.Value{"AWS_PROFILE": types.StringValue("ops")}),
		},
	}
	cfg, err = exec.restConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://eks.example.com" || string(cfg.CAData) != "-----BEGIN CERTIFICATE-----\n" {
		t.Errorf("host %q CA %q", cfg.Host, cfg.CAData)
	}
	e := cfg.ExecProvider
	if e == nil || e.Command != "aws" || len(e.Args) != 4 || e.Args[3] != "demo" || len(e.Env) != 1 || e.Env[0].Name != "AWS_PROFILE" || e.Env[0].Value != "ops" {
		t.Errorf("exec provider %+v", e)
	}

	if _, err := (&kubernetesModel{ConfigPath: types.StringValue(filepath.Join(t.TempDir(), "missing"))}).restConfig(ctx); err == nil {
		t.Error("a missing kubeconfig gave no error")
	}
}

func TestKubernetesKnown(t *testing.T) {
	if !(&kubernetesModel{Host: types.StringValue("https://x")}).known() {
		t.Error("known host reported unknown")
	}
	if (&kubernetesModel{Host: types.StringUnknown()}).known() {
		t.Error("unknown host reported known")
	}
	if (&kubernetesModel{Exec: &execModel{Args: types.ListUnknown(types.StringType)}}).known() {
		t.Error("unknown exec args reported known")
	}
}

func TestAWSConfig(t *testing.T) {
	ctx := context.Background()
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	if _, err := (&awsModel{}).config(ctx); err == nil {
		t.Error("no region anywhere gave no error")
	}
	cfg, err := (&awsModel{Region: types.StringValue("eu-west-1")}).config(ctx)
	if err != nil || cfg.Region != "eu-west-1" {
		t.Errorf("region: %q %v", cfg.Region, err)
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	cfg, err = (&awsModel{Region: types.StringValue("eu-west-1"), AssumeRole: &assumeRoleModel{
		RoleARN: types.StringValue("arn:aws:iam::123456789012:role/x"), SessionName: types.StringValue("tf"),
	}}).config(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:1" {
		t.Errorf("AWS_ENDPOINT_URL not honoured: %v", cfg.BaseEndpoint)
	}
	// Assuming the role calls STS at the endpoint, which refuses: the
	// credentials come from the role, not from the environment.
	if _, err := cfg.Credentials.Retrieve(ctx); err == nil {
		t.Error("assume_role credentials were retrieved without STS")
	}
}
