package userdata

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Bottlerocket decodes the node class's TOML, sets the runtime's
// settings.kubernetes values over it (unknown keys are kept) and encodes
// the result.
func Bottlerocket(o Options) (string, error) {
	doc := map[string]any{}
	if o.Custom != nil && *o.Custom != "" {
		if _, err := toml.Decode(*o.Custom, &doc); err != nil {
			return "", fmt.Errorf("spec.userData is not valid Bottlerocket TOML: %w", err)
		}
	}
	settings := table(doc, "settings")
	k8s := table(settings, "kubernetes")
	k8s["cluster-name"] = o.ClusterName
	k8s["api-server"] = o.ClusterEndpoint
	if o.CABundle != "" {
		k8s["cluster-certificate"] = o.CABundle
	}
	if len(o.Labels) > 0 {
		labels := table(k8s, "node-labels")
		for key, v := range o.Labels {
			labels[key] = v
		}
	}
	if len(o.Taints) > 0 {
		taints := table(k8s, "node-taints")
		for _, t := range o.Taints {
			entry := t.Value + ":" + string(t.Effect)
			existing, _ := taints[t.Key].([]any)
			dup := false
			for _, e := range existing {
				if e == entry {
					dup = true
				}
			}
			if !dup {
				taints[t.Key] = append(existing, entry)
			}
		}
	}
	k := o.Kubelet.MustSettings()
	if k.MaxPods != nil {
		k8s["max-pods"] = int64(*k.MaxPods)
	}
	if len(k.ClusterDNS) > 0 {
		k8s["cluster-dns-ip"] = k.ClusterDNS[0]
	}
	grace := map[string]string{}
	for signal, d := range k.EvictionSoftGracePeriod {
		grace[signal] = d.Duration.String()
	}
	for key, m := range map[string]map[string]string{
		"kube-reserved": k.KubeReserved, "system-reserved": k.SystemReserved, "eviction-hard": k.EvictionHard,
		"eviction-soft": k.EvictionSoft, "eviction-soft-grace-period": grace,
	} {
		if len(m) > 0 {
			t := table(k8s, key)
			for rk, rv := range m {
				t[rk] = rv
			}
		}
	}
	if k.EvictionMaxPodGracePeriod != nil {
		k8s["eviction-max-pod-grace-period"] = int64(*k.EvictionMaxPodGracePeriod)
	}
	if k.ImageGCHighThresholdPercent != nil {
		k8s["image-gc-high-threshold-percent"] = int64(*k.ImageGCHighThresholdPercent)
	}
	if k.ImageGCLowThresholdPercent != nil {
		k8s["image-gc-low-threshold-percent"] = int64(*k.ImageGCLowThresholdPercent)
	}
	if k.CPUCFSQuota != nil {
		k8s["cpu-cfs-quota-enforced"] = *k.CPUCFSQuota
	}
	if o.RAID0 {
		table(settings, "bootstrap-commands")["000-mount-instance-storage"] = raid0Bootstrap
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(doc); err != nil {
		return "", fmt.Errorf("rendering Bottlerocket settings: %w", err)
	}
	return b.String(), nil
}

// raid0Bootstrap is the bootstrap command Karpenter gives Bottlerocket for
// instanceStorePolicy RAID0: stripe the instance store disks into one
// ephemeral volume and bind the kubelet's, containerd's and the pod logs'
// directories onto it, on every boot, failing the boot if it fails.
var raid0Bootstrap = map[string]any{
	"commands": [][]string{
		{"apiclient", "ephemeral-storage", "init"},
		{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
	},
	"mode":      "always",
	"essential": true,
}

// table returns m[key] as a table, creating it (or replacing a non-table).
func table(m map[string]any, key string) map[string]any {
	if t, ok := m[key].(map[string]any); ok {
		return t
	}
	t := map[string]any{}
	m[key] = t
	return t
}
