package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubernetesModel is the provider's kubernetes block.
type kubernetesModel struct {
	Host                 types.String `tfsdk:"host"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	Token                types.String `tfsdk:"token"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Exec                 *execModel   `tfsdk:"exec"`
}

// execModel runs a credential plugin such as `aws eks get-token`.
type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

func kubernetesSchema() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How to reach the cluster's Kubernetes API. Either `config_path` (with an optional " +
			"`config_context`), or `host` with `cluster_ca_certificate` and one of `token`, " +
			"`client_certificate`/`client_key` or `exec`; explicit attributes override the kubeconfig's. " +
			"Without any, `KUBECONFIG` and `~/.kube/config` are read. Values may be unknown until apply " +
			"(for example the endpoint of a cluster created in the same run): the provider contacts the " +
			"cluster only when it reads or writes objects.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"host":                   schema.StringAttribute{Optional: true, MarkdownDescription: "API server URL, such as the `endpoint` of an `aws_eks_cluster`."},
			"cluster_ca_certificate": schema.StringAttribute{Optional: true, MarkdownDescription: "PEM-encoded CA bundle of the API server (decode EKS's base64 `certificate_authority` with `base64decode`)."},
			"insecure":               schema.BoolAttribute{Optional: true, MarkdownDescription: "Skip verifying the API server's certificate. For test clusters only."},
			"token":                  schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "Bearer token."},
			"client_certificate":     schema.StringAttribute{Optional: true, MarkdownDescription: "PEM-encoded client certificate for TLS client authentication."},
			"client_key":             schema.StringAttribute{Optional: true, Sensitive: true, MarkdownDescription: "PEM-encoded key of `client_certificate`."},
			"config_path":            schema.StringAttribute{Optional: true, MarkdownDescription: "Path of a kubeconfig file."},
			"config_context":         schema.StringAttribute{Optional: true, MarkdownDescription: "Context of the kubeconfig to use instead of its current context."},
			"exec": schema.SingleNestedAttribute{
				Optional:            true,
				MarkdownDescription: "A credential plugin run for a token, for example `aws eks get-token --cluster-name NAME`.",
				Attributes: map[string]schema.Attribute{
					"api_version": schema.StringAttribute{Required: true, MarkdownDescription: "Version of the ExecCredential API the plugin speaks, such as `client.authentication.k8s.io/v1beta1`."},
					"command":     schema.StringAttribute{Required: true, MarkdownDescription: "Command to run, such as `aws`."},
					"args":        schema.ListAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Arguments of the command."},
					"env":         schema.MapAttribute{Optional: true, Sensitive: true, ElementType: types.StringType, MarkdownDescription: "Environment variables set for the command (sensitive: they often carry credentials)."},
				},
			},
		},
	}
}

// known reports whether every value of the block is known, so a client can
// be built from it.
func (m *kubernetesModel) known() bool {
	if m == nil {
		return true
	}
	for _, v := range []attr.Value{m.Host, m.ClusterCACertificate, m.Insecure, m.Token, m.ClientCertificate, m.ClientKey, m.ConfigPath, m.ConfigContext} {
		if v.IsUnknown() {
			return false
		}
	}
	if e := m.Exec; e != nil {
		for _, v := range []attr.Value{e.APIVersion, e.Command, e.Args, e.Env} {
			if v.IsUnknown() {
				return false
			}
		}
	}
	return true
}

// restConfig builds the client configuration: the kubeconfig (config_path,
// else the default loading rules) under the explicit attributes.
func (m *kubernetesModel) restConfig(ctx context.Context) (*rest.Config, error) {
	if m == nil {
		m = &kubernetesModel{}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if p := m.ConfigPath.ValueString(); p != "" {
		rules.ExplicitPath = p
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: m.ConfigContext.ValueString()}
	explicit := m.Host.ValueString() != ""
	var cfg *rest.Config
	if m.ConfigPath.ValueString() != "" || !explicit {
		c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: loading the kubeconfig: %w; set kubernetes.config_path or kubernetes.host", err)
		}
		cfg = c
	} else {
		cfg = &rest.Config{}
	}
	if explicit {
		cfg.Host = m.Host.ValueString()
	}
	if v := m.ClusterCACertificate.ValueString(); v != "" {
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = []byte(v), ""
	}
	if m.Insecure.ValueBool() {
		cfg.TLSClientConfig.Insecure = true
		cfg.TLSClientConfig.CAData, cfg.TLSClientConfig.CAFile = nil, ""
	}
	if v := m.Token.ValueString(); v != "" {
		cfg.BearerToken, cfg.BearerTokenFile = v, ""
	}
	if v := m.ClientCertificate.ValueString(); v != "" {
		cfg.TLSClientConfig.CertData, cfg.TLSClientConfig.CertFile = []byte(v), ""
	}
	if v := m.ClientKey.ValueString(); v != "" {
		cfg.TLSClientConfig.KeyData, cfg.TLSClientConfig.KeyFile = []byte(v), ""
	}
	if e := m.Exec; e != nil {
		exec := &clientcmdapi.ExecConfig{
			APIVersion:      e.APIVersion.ValueString(),
			Command:         e.Command.ValueString(),
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
		var args []string
		if diags := e.Args.ElementsAs(ctx, &args, true); diags.HasError() {
			return nil, fmt.Errorf("kubernetes.exec.args: %v", diags)
		}
		exec.Args = args
		env := map[string]string{}
		if diags := e.Env.ElementsAs(ctx, &env, true); diags.HasError() {
			return nil, fmt.Errorf("kubernetes.exec.env: %v", diags)
		}
		names := make([]string, 0, len(env))
		for k := range env {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			exec.Env = append(exec.Env, clientcmdapi.ExecEnvVar{Name: k, Value: env[k]})
		}
		cfg.ExecProvider = exec
	}
	if cfg.Host == "" {
		return nil, fmt.Errorf("kubernetes: no API server address: set kubernetes.host or kubernetes.config_path")
	}
	cfg.UserAgent = "terraform-provider-joist"
	return cfg, nil
}
