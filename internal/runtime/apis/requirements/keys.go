package requirements

import "sort"

// aliases maps deprecated or provider-specific label keys onto the stable key
// they mean, so a pod selecting the beta key matches a node labelled with the
// stable one.
var aliases = map[string]string{
	"failure-domain.beta.kubernetes.io/zone":   "topology.kubernetes.io/zone",
	"failure-domain.beta.kubernetes.io/region": "topology.kubernetes.io/region",
	"beta.kubernetes.io/arch":                  "kubernetes.io/arch",
	"beta.kubernetes.io/os":                    "kubernetes.io/os",
	"beta.kubernetes.io/instance-type":         "node.kubernetes.io/instance-type",
	"topology.ebs.csi.aws.com/zone":            "topology.kubernetes.io/zone",
}

// NormalizeKey returns the stable label key for key (identity for keys that
// have no alias).
func NormalizeKey(key string) string {
	if k, ok := aliases[key]; ok {
		return k
	}
	return key
}

// KeySet is a set of label keys, e.g. the well-known labels that may be left
// undefined by a NodePool and still be selected by pods.
type KeySet map[string]struct{}

// NewKeySet builds a KeySet from keys (normalised).
func NewKeySet(keys ...string) KeySet {
	s := make(KeySet, len(keys))
	for _, k := range keys {
		s[NormalizeKey(k)] = struct{}{}
	}
	return s
}

// Has reports whether key is in the set.
func (s KeySet) Has(key string) bool {
	_, ok := s[key]
	return ok
}

// Sorted returns the keys in order.
func (s KeySet) Sorted() []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
