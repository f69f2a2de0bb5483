package userdata

import (
	"fmt"

	"sigs.k8s.io/yaml"
)

// NodeConfig is the part of nodeadm's node.eks.aws/v1alpha1 NodeConfig the
// runtime writes.
type NodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       NodeConfigSpec `json:"spec"`
}

// NodeConfigSpec is NodeConfig.spec.
type NodeConfigSpec struct {
	Cluster  ClusterDetails  `json:"cluster"`
	Kubelet  KubeletOptions  `json:"kubelet,omitempty"`
	Instance InstanceOptions `json:"instance,omitempty"`
}

// ClusterDetails is how the node reaches the control plane.
type ClusterDetails struct {
	Name                 string `json:"name"`
	APIServerEndpoint    string `json:"apiServerEndpoint"`
	CertificateAuthority string `json:"certificateAuthority"`
	CIDR                 string `json:"cidr"`
}

// KubeletOptions are a KubeletConfiguration fragment and extra flags.
type KubeletOptions struct {
	Config map[string]any `json:"config,omitempty"`
	Flags  []string       `json:"flags,omitempty"`
}

// InstanceOptions hold local storage settings.
type InstanceOptions struct {
	LocalStorage *LocalStorage `json:"localStorage,omitempty"`
}

// LocalStorage selects how instance-store disks are used.
type LocalStorage struct {
	Strategy string `json:"strategy"`
}

// AL2023 renders the node class's parts followed by the runtime's NodeConfig;
// nodeadm merges NodeConfigs in order, so the runtime's fields win.
func AL2023(o Options) (string, error) {
	if o.ClusterCIDR == "" {
		return "", fmt.Errorf("AL2023 nodes need the cluster's service CIDR (IPv4 or IPv6), which eks:DescribeCluster reports; it is not known yet")
	}
	parts, err := customParts(o.Custom, ContentTypeShell)
	if err != nil {
		return "", err
	}
	kubelet, err := kubeletConfig(o)
	if err != nil {
		return "", err
	}
	nc := NodeConfig{
		APIVersion: "node.eks.aws/v1alpha1", Kind: "NodeConfig",
		Spec: NodeConfigSpec{
			Cluster: ClusterDetails{Name: o.ClusterName, APIServerEndpoint: o.ClusterEndpoint, CertificateAuthority: o.CABundle, CIDR: o.ClusterCIDR},
			Kubelet: KubeletOptions{Config: kubelet, Flags: flags(o)},
		},
	}
	if o.RAID0 {
		nc.Spec.Instance.LocalStorage = &LocalStorage{Strategy: "RAID0"}
	}
	body, err := yaml.Marshal(nc)
	if err != nil {
		return "", fmt.Errorf("rendering the AL2023 NodeConfig: %w", err)
	}
	return WriteMIME(append(parts, Part{ContentType: ContentTypeNodeConfig, Body: string(body)})), nil
}

func flags(o Options) []string {
	var out []string
	if len(o.Labels) > 0 {
		out = append(out, "--node-labels="+labelsFlag(o.Labels))
	}
	if len(o.Taints) > 0 {
		out = append(out, "--register-with-taints="+taintsFlag(o.Taints))
	}
	return out
}

// kubeletConfig is the node class's whole kubelet configuration, every
// field as written: nodeadm merges it over the AMI's KubeletConfiguration.
func kubeletConfig(o Options) (map[string]any, error) {
	cfg, err := o.Kubelet.Config()
	if err != nil {
		return nil, err
	}
	return cfg, nil
}
