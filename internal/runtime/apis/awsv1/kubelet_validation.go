package awsv1

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	sigsjson "sigs.k8s.io/json"
)

// evictionSignals are the signals the kubelet's eviction maps take; it
// ignores any other key, so one would be a threshold that never applies.
var evictionSignals = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}

// reservableResources are what kubeReserved and systemReserved may reserve.
var reservableResources = []string{"cpu", "memory", "ephemeral-storage", "pid"}

// runtimeOwnedKubeletKeys are kubelet fields the runtime sets on every node
// and would overwrite, with why.
var runtimeOwnedKubeletKeys = map[string]string{
	"registerWithTaints": "the runtime registers the node with the NodeClaim's taints; set taints on the NodePool",
}

// ValidateKubelet returns every reason the runtime cannot apply kc to nodes
// of the AMI family as written, each naming the field and the fix. The
// rules are Karpenter v1.15's (which reports them on the node class's
// ValidationSucceeded condition): the fields and types of the kubelet's own
// KubeletConfiguration, the values the kubelet would ignore or refuse, and
// the fields an AMI family cannot pass on. Joist also refuses kubelet
// expressions (Karpenter's NodeClassCEL gate), which it does not evaluate,
// and extra fields on the Custom family, whose user data is the user's.
func ValidateKubelet(kc KubeletConfiguration, family string) []error {
	return append(ValidateKubeletShape(kc), ValidateKubeletForFamily(kc, family)...)
}

// ValidateKubeletShape is ValidateKubelet's family-independent part: what
// Karpenter reports as InvalidKubeletConfiguration.
func ValidateKubeletShape(kc KubeletConfiguration) []error {
	if len(kc) == 0 {
		return nil
	}
	return append(validateKubeletTypes(kc), validateKubeletValues(kc)...)
}

// ValidateKubeletForFamily is ValidateKubelet's part about what the AMI
// family passes on: what Karpenter reports as UnsupportedKubeletConfiguration.
func ValidateKubeletForFamily(kc KubeletConfiguration, family string) []error {
	if len(kc) == 0 {
		return nil
	}
	return validateKubeletForFamily(kc, family)
}

// validateKubeletTypes decodes kc as the kubelet's KubeletConfiguration,
// which rejects unknown fields and values of the wrong type.
func validateKubeletTypes(kc KubeletConfiguration) []error {
	var errs []error
	if v, ok := kc["maxPods"]; ok && isJSONString(v.Raw) {
		errs = append(errs, fmt.Errorf("spec.kubelet.maxPods: %s is an expression; Joist does not evaluate kubelet expressions (Karpenter's NodeClassCEL feature gate), give a number of pods", v.Raw))
	}
	raw, err := json.Marshal(kc)
	if err != nil {
		return append(errs, fmt.Errorf("spec.kubelet: %w", err))
	}
	strict, err := sigsjson.UnmarshalStrict(raw, &kubeletv1beta1.KubeletConfiguration{})
	if err != nil {
		if len(errs) > 0 {
			return errs // the expression above is the reason
		}
		return []error{fmt.Errorf("spec.kubelet: %v: use the field types of the kubelet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1)", err)}
	}
	for _, e := range strict {
		errs = append(errs, fmt.Errorf("spec.kubelet: %v: not a field of the kubelet's KubeletConfiguration (kubelet.config.k8s.io/v1beta1), check its spelling", e))
	}
	return errs
}

func validateKubeletValues(kc KubeletConfiguration) []error {
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(runtimeOwnedKubeletKeys)) {
		if _, ok := kc[key]; ok {
			errs = append(errs, fmt.Errorf("spec.kubelet.%s cannot be set: %s", key, runtimeOwnedKubeletKeys[key]))
		}
	}
	for _, field := range []string{"evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionMinimumReclaim"} {
		m, ok := stringMap(kc, field)
		if !ok {
			continue
		}
		for _, signal := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(evictionSignals, signal) {
				errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: not an eviction signal, use one of %s", field, signal, strings.Join(evictionSignals, ", ")))
			}
			if field == "evictionSoftGracePeriod" {
				if d, err := time.ParseDuration(m[signal]); err != nil || d < 0 {
					errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: %q is not a duration such as 1m30s", field, signal, m[signal]))
				}
				continue
			}
			if err := evictionThreshold(m[signal]); err != nil {
				errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: %q %v", field, signal, m[signal], err))
			}
		}
	}
	soft, _ := stringMap(kc, "evictionSoft")
	grace, _ := stringMap(kc, "evictionSoftGracePeriod")
	for _, s := range slices.Sorted(maps.Keys(soft)) {
		if _, ok := grace[s]; !ok {
			errs = append(errs, fmt.Errorf("spec.kubelet.evictionSoft[%s] has no evictionSoftGracePeriod[%s]: give it one, the kubelet ignores a soft threshold without", s, s))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(grace)) {
		if _, ok := soft[s]; !ok {
			errs = append(errs, fmt.Errorf("spec.kubelet.evictionSoftGracePeriod[%s] has no evictionSoft[%s]: remove it or add the threshold", s, s))
		}
	}
	for _, field := range []string{"kubeReserved", "systemReserved"} {
		m, ok := stringMap(kc, field)
		if !ok {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(m)) {
			if !slices.Contains(reservableResources, name) {
				errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: not a reservable resource, use one of %s", field, name, strings.Join(reservableResources, ", ")))
			}
			q, err := resource.ParseQuantity(m[name])
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: %q is not a quantity; Joist does not evaluate kubelet expressions (Karpenter's NodeClassCEL feature gate), give a quantity such as 100m or 1Gi", field, name, m[name]))
			case q.Sign() < 0:
				errs = append(errs, fmt.Errorf("spec.kubelet.%s[%s]: %q cannot be negative", field, name, m[name]))
			}
		}
	}
	for _, field := range []string{"imageGCHighThresholdPercent", "imageGCLowThresholdPercent"} {
		if v, ok := integer(kc, field); ok && (v < 0 || v > 100) {
			errs = append(errs, fmt.Errorf("spec.kubelet.%s: %d is not a percentage from 0 to 100", field, v))
		}
	}
	for _, field := range []string{"maxPods", "podsPerCore", "evictionMaxPodGracePeriod"} {
		if v, ok := integer(kc, field); ok && v < 0 {
			errs = append(errs, fmt.Errorf("spec.kubelet.%s: %d cannot be negative", field, v))
		}
	}
	high, hasHigh := integer(kc, "imageGCHighThresholdPercent")
	low, hasLow := integer(kc, "imageGCLowThresholdPercent")
	if hasHigh && hasLow && high <= low {
		errs = append(errs, fmt.Errorf("spec.kubelet: imageGCHighThresholdPercent (%d) must be greater than imageGCLowThresholdPercent (%d)", high, low))
	}
	return errs
}

// validateKubeletForFamily refuses what the family's bootstrap cannot pass
// to the kubelet: only AL2023 (nodeadm's NodeConfig) takes a whole kubelet
// configuration; the others take the fields of KubeletSettings, each as a
// flag or setting, Bottlerocket without podsPerCore and all of them with a
// single cluster DNS address. Custom user data is the user's own, so only
// the settings the runtime reads for capacity make sense there.
func validateKubeletForFamily(kc KubeletConfiguration, family string) []error {
	if family == AMIFamilyAL2023 {
		return nil
	}
	var errs []error
	if extra := kc.UnmanagedKeys(); len(extra) > 0 {
		fix := "use the AL2023 AMI family, which passes every kubelet field to the node"
		if family == AMIFamilyCustom {
			fix = "Custom user data is yours: set them in the kubelet configuration your user data writes"
		}
		errs = append(errs, fmt.Errorf("spec.kubelet: %s cannot be applied by the %s AMI family, which takes only %s: %s",
			strings.Join(extra, ", "), family, strings.Join(managedKubeletKeys, ", "), fix))
	}
	if family == AMIFamilyCustom {
		return errs
	}
	if _, ok := kc["podsPerCore"]; ok && family == AMIFamilyBottlerocket {
		errs = append(errs, fmt.Errorf("spec.kubelet.podsPerCore cannot be applied by the Bottlerocket AMI family, which has no such setting: remove it or set maxPods"))
	}
	var dns []string
	if v, ok := kc["clusterDNS"]; ok && json.Unmarshal(v.Raw, &dns) == nil && len(dns) > 1 {
		errs = append(errs, fmt.Errorf("spec.kubelet.clusterDNS: the %s AMI family takes one cluster DNS address, %d are set: keep one", family, len(dns)))
	}
	return errs
}

// evictionThreshold checks a threshold: a percentage from 0 to 100 or a
// non-negative quantity.
func evictionThreshold(v string) error {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		if f, err := strconv.ParseFloat(pct, 64); err != nil || f < 0 || f > 100 {
			return fmt.Errorf("is not a percentage from 0%% to 100%%")
		}
		return nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return fmt.Errorf("is neither a percentage nor a quantity")
	}
	if q.Sign() < 0 {
		return fmt.Errorf("cannot be negative")
	}
	return nil
}

// stringMap reads a map[string]string field; false when absent or of
// another type (which validateKubeletTypes reports).
func stringMap(kc KubeletConfiguration, field string) (map[string]string, bool) {
	v, ok := kc[field]
	if !ok {
		return nil, false
	}
	var m map[string]string
	if json.Unmarshal(v.Raw, &m) != nil {
		return nil, false
	}
	return m, true
}

// integer reads an integer field; false when absent or of another type.
func integer(kc KubeletConfiguration, field string) (int64, bool) {
	v, ok := kc[field]
	if !ok {
		return 0, false
	}
	var i int64
	if json.Unmarshal(v.Raw, &i) != nil {
		return 0, false
	}
	return i, true
}

func isJSONString(raw []byte) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil
}
