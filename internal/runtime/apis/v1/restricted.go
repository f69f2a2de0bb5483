package v1

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// RestrictedLabelDomains are label domains (and their subdomains) that users
// may not use in NodePool labels or requirements, apart from the well-known
// keys: the runtime's own, as in Karpenter v1.15 (earlier releases also
// restricted kubernetes.io and k8s.io).
var RestrictedLabelDomains = []string{
	Group,
	AWSGroup,
}

// RestrictedLabels are keys users may never set: the runtime owns the
// NodePool label, and the hostname is a per-node placeholder in scheduling.
var RestrictedLabels = []string{
	NodePoolLabelKey,
	corev1.LabelHostname,
}

// labelDomain mirrors the CRD rules' `key.find("^([^/]+)")`: the text before
// the first slash, or the whole key when it has no prefix. Keeping the same
// definition keeps this function and the CRD in agreement on every key.
func labelDomain(key string) string {
	domain, _, _ := strings.Cut(key, "/")
	return domain
}

// wellKnownInDomain reports whether key is a well-known (or normalised
// alias) label, which restricted domains still allow.
func wellKnownInDomain(key string) bool {
	if slices.Contains(WellKnownLabels, key) {
		return true
	}
	_, alias := NormalizedLabels[key]
	return alias
}

// IsRestrictedLabel returns nil when users may put key in a NodePool's
// template labels or requirements, and otherwise an error for every rule the
// key breaks, worded as the CRD's validation messages are. NodeClaim
// requirements follow the same rules except that they may name
// NodePoolLabelKey, which the runtime adds to them.
func IsRestrictedLabel(key string) error {
	var errs []error
	domain := labelDomain(key)
	for _, restricted := range RestrictedLabelDomains {
		if !strings.HasSuffix(domain, restricted) || wellKnownInDomain(key) {
			continue
		}
		errs = append(errs, fmt.Errorf("label domain %q is restricted", restricted))
	}
	for _, restricted := range RestrictedLabels {
		if key == restricted {
			errs = append(errs, fmt.Errorf("label %q is restricted", restricted))
		}
	}
	return errors.Join(errs...)
}

// IsRestrictedNodeLabel reports whether the runtime must not copy key from a
// NodeClaim onto its Node because the kubelet or the runtime itself owns it:
// restricted keys, except well-known ones and the NodePool label, which the
// runtime writes.
func IsRestrictedNodeLabel(key string) bool {
	if wellKnownInDomain(key) || key == NodePoolLabelKey {
		return false
	}
	return IsRestrictedLabel(key) != nil
}
