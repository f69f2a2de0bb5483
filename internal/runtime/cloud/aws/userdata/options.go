package userdata

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// Options are what a node needs to join the cluster and register as its NodeClaim.
type Options struct {
	ClusterName     string
	ClusterEndpoint string
	// CABundle is the base64 PEM of the cluster CA.
	CABundle string
	// ClusterCIDR is the service CIDR, IPv4 or IPv6 (AL2023's NodeConfig
	// needs it; AL2 passes it to bootstrap.sh on IPv6 clusters).
	ClusterCIDR string
	// IPv6 says the cluster's IP family is IPv6.
	IPv6 bool
	// Kubelet is the node class's kubelet configuration with maxPods resolved
	// for the instance types sharing this user data. AL2023 passes all of it
	// to the kubelet; the other families the fields of awsv1.KubeletSettings
	// (ValidateKubelet refuses the rest for them).
	Kubelet awsv1.KubeletConfiguration
	Labels  map[string]string
	// Taints are registered with the node; include the unregistered taint.
	Taints []corev1.Taint
	// RAID0 stripes local NVMe disks for kubelet and container storage.
	RAID0 bool
	// Custom is the node class's spec.userData.
	Custom *string
}

// Generate returns the user data (not base64-encoded) for an AMI family.
func Generate(family string, o Options) (string, error) {
	switch family {
	case awsv1.AMIFamilyAL2023:
		return AL2023(o)
	case awsv1.AMIFamilyAL2:
		return AL2(o)
	case awsv1.AMIFamilyBottlerocket:
		return Bottlerocket(o)
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return Windows(o), nil
	case awsv1.AMIFamilyCustom:
		if o.Custom == nil {
			return "", nil
		}
		return *o.Custom, nil
	}
	return "", fmt.Errorf("amiFamily %q has no user data format; use one of AL2, AL2023, Bottlerocket, Windows2019, Windows2022, Windows2025, Custom", family)
}

// labelsFlag renders labels as kubelet's --node-labels value, sorted.
func labelsFlag(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

// taintsFlag renders taints as kubelet's --register-with-taints value.
func taintsFlag(taints []corev1.Taint) string {
	parts := make([]string, 0, len(taints))
	for _, t := range taints {
		parts = append(parts, taintString(t))
	}
	return strings.Join(parts, ",")
}

func taintString(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// kubeletArgs are the kubelet flags AL2 and Windows pass through their
// bootstrap scripts.
func kubeletArgs(o Options) []string {
	var args []string
	if len(o.Labels) > 0 {
		args = append(args, "--node-labels="+labelsFlag(o.Labels))
	}
	if len(o.Taints) > 0 {
		args = append(args, "--register-with-taints="+taintsFlag(o.Taints))
	}
	k := o.Kubelet.MustSettings()
	if k.MaxPods != nil {
		args = append(args, fmt.Sprintf("--max-pods=%d", *k.MaxPods))
	}
	if k.PodsPerCore != nil {
		args = append(args, fmt.Sprintf("--pods-per-core=%d", *k.PodsPerCore))
	}
	for _, m := range []struct {
		flag string
		vals map[string]string
	}{
		{"--system-reserved", k.SystemReserved}, {"--kube-reserved", k.KubeReserved},
		{"--eviction-hard", k.EvictionHard}, {"--eviction-soft", k.EvictionSoft},
	} {
		if len(m.vals) > 0 {
			args = append(args, m.flag+"="+joinMap(m.vals, "="))
		}
	}
	if len(k.EvictionSoftGracePeriod) > 0 {
		gp := map[string]string{}
		for s, d := range k.EvictionSoftGracePeriod {
			gp[s] = d.Duration.String()
		}
		args = append(args, "--eviction-soft-grace-period="+joinMap(gp, "="))
	}
	if k.EvictionMaxPodGracePeriod != nil {
		args = append(args, fmt.Sprintf("--eviction-max-pod-grace-period=%d", *k.EvictionMaxPodGracePeriod))
	}
	if k.ImageGCHighThresholdPercent != nil {
		args = append(args, fmt.Sprintf("--image-gc-high-threshold=%d", *k.ImageGCHighThresholdPercent))
	}
	if k.ImageGCLowThresholdPercent != nil {
		args = append(args, fmt.Sprintf("--image-gc-low-threshold=%d", *k.ImageGCLowThresholdPercent))
	}
	if k.CPUCFSQuota != nil {
		args = append(args, fmt.Sprintf("--cpu-cfs-quota=%t", *k.CPUCFSQuota))
	}
	return args
}

// joinMap renders a map as k<sep>v pairs joined by commas, sorted.
func joinMap(m map[string]string, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+sep+m[k])
	}
	return strings.Join(parts, ",")
}
