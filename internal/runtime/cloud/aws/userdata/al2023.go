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
		return "", fmt.Errorf("AL2023 nodes need the cluster's service CIDR: set the cluster CIDR setting")
	}
	parts, err := customParts(o.Custom, ContentTypeShell)
	if err != nil {
		return "", err
	}
	nc := NodeConfig{
		APIVersion: "node.eks.aws/v1alpha1", Kind: "NodeConfig",
		Spec: NodeConfigSpec{
			Cluster: ClusterDetails{Name: o.ClusterName, APIServerEndpoint: o.ClusterEndpoint, CertificateAuthority: o.CABundle, CIDR: o.ClusterCIDR},
			Kubelet: KubeletOptions{Config: kubeletConfig(o), Flags: flags(o)},
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

// kubeletConfig is the KubeletConfiguration fragment of the node class's
// kubelet settings (field names as in kubelet.config.k8s.io/v1beta1).
func kubeletConfig(o Options) map[string]any {
	cfg := map[string]any{}
	k := o.Kubelet
	if k == nil {
		return cfg
	}
	if k.MaxPods != nil {
		cfg["maxPods"] = *k.MaxPods
	}
	if k.PodsPerCore != nil {
		cfg["podsPerCore"] = *k.PodsPerCore
	}
	if len(k.ClusterDNS) > 0 {
		cfg["clusterDNS"] = k.ClusterDNS
	}
	set := func(key string, m map[string]string) {
		if len(m) > 0 {
			cfg[key] = m
		}
	}
	set("systemReserved", k.SystemReserved)
	set("kubeReserved", k.KubeReserved)
	set("evictionHard", k.EvictionHard)
	set("evictionSoft", k.EvictionSoft)
	if len(k.EvictionSoftGracePeriod) > 0 {
		gp := map[string]string{}
		for s, d := range k.EvictionSoftGracePeriod {
			gp[s] = d.Duration.String()
		}
		cfg["evictionSoftGracePeriod"] = gp
	}
	if k.EvictionMaxPodGracePeriod != nil {
		cfg["evictionMaxPodGracePeriod"] = *k.EvictionMaxPodGracePeriod
	}
	if k.ImageGCHighThresholdPercent != nil {
		cfg["imageGCHighThresholdPercent"] = *k.ImageGCHighThresholdPercent
	}
	if k.ImageGCLowThresholdPercent != nil {
		cfg["imageGCLowThresholdPercent"] = *k.ImageGCLowThresholdPercent
	}
	if k.CPUCFSQuota != nil {
		cfg["cpuCFSQuota"] = *k.CPUCFSQuota
	}
	return cfg
}
