package awsv1

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KubeletConfiguration is the kubelet configuration of the node class's
// nodes: any field of the kubelet's KubeletConfiguration
// (kubelet.config.k8s.io/v1beta1), by its JSON name, as in Karpenter v1.15.
// The runtime reads the fields of KubeletSettings for its capacity model and
// bootstrap; AL2023 nodes get every field in their NodeConfig. Validate says
// what the runtime refuses.
type KubeletConfiguration map[string]apiextensionsv1.JSON

// KubeletSettings are the kubelet fields the runtime itself reads: for the
// capacity model (pods, reservations, eviction) and for the bootstrap of AMI
// families that take settings rather than a configuration file.
type KubeletSettings struct {
	ClusterDNS                  []string                   `json:"clusterDNS,omitempty"`
	MaxPods                     *int32                     `json:"maxPods,omitempty"`
	PodsPerCore                 *int32                     `json:"podsPerCore,omitempty"`
	SystemReserved              map[string]string          `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string          `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string          `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string          `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]metav1.Duration `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32                     `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32                     `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32                     `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool                      `json:"cpuCFSQuota,omitempty"`
}

// managedKubeletKeys are the JSON names of KubeletSettings' fields, read off
// the type so the list cannot fall behind it.
var managedKubeletKeys = func() []string {
	var keys []string
	t := reflect.TypeOf(KubeletSettings{})
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	slices.Sort(keys)
	return keys
}()

// ManagedKubeletKeys lists the kubelet fields every AMI family applies.
func ManagedKubeletKeys() []string { return slices.Clone(managedKubeletKeys) }

// Settings decodes the fields the runtime reads. An empty configuration
// gives empty settings; a field of the wrong type is an error naming it.
func (kc KubeletConfiguration) Settings() (*KubeletSettings, error) {
	out := &KubeletSettings{}
	if len(kc) == 0 {
		return out, nil
	}
	managed := map[string]apiextensionsv1.JSON{}
	for _, k := range managedKubeletKeys {
		if v, ok := kc[k]; ok {
			managed[k] = v
		}
	}
	raw, err := json.Marshal(managed)
	if err != nil {
		return nil, fmt.Errorf("spec.kubelet: %w", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return nil, fmt.Errorf("spec.kubelet: %w", err)
	}
	return out, nil
}

// MustSettings is Settings for configurations already validated (the
// runtime acts only on node classes whose ValidationSucceeded is True); a
// configuration that does not decode gives empty settings.
func (kc KubeletConfiguration) MustSettings() *KubeletSettings {
	s, err := kc.Settings()
	if err != nil {
		return &KubeletSettings{}
	}
	return s
}

// UnmanagedKeys are the configured fields outside KubeletSettings, sorted:
// those only a family that takes a whole kubelet configuration (AL2023)
// applies.
func (kc KubeletConfiguration) UnmanagedKeys() []string {
	var out []string
	for k := range kc {
		if !slices.Contains(managedKubeletKeys, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Config decodes the whole configuration as JSON values, for a kubelet
// configuration file.
func (kc KubeletConfiguration) Config() (map[string]any, error) {
	out := make(map[string]any, len(kc))
	for k, v := range kc {
		var val any
		if err := json.Unmarshal(v.Raw, &val); err != nil {
			return nil, fmt.Errorf("spec.kubelet.%s: %w", k, err)
		}
		out[k] = val
	}
	return out, nil
}

// String is the configuration as JSON (keys sorted), "null" when empty, as
// Karpenter writes it into the static-drift hash.
func (kc KubeletConfiguration) String() string {
	if len(kc) == 0 {
		return "null"
	}
	raw, _ := json.Marshal(kc)
	return string(raw)
}

// KubeletConfigurationOf encodes settings as a configuration (tests and
// fixtures build node classes this way).
func KubeletConfigurationOf(s KubeletSettings) KubeletConfiguration {
	raw, _ := json.Marshal(s)
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(raw, &fields)
	out := KubeletConfiguration{}
	for k, v := range fields {
		out[k] = apiextensionsv1.JSON{Raw: v}
	}
	return out
}
