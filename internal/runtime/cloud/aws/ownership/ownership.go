// Package ownership is the one rule for which AWS resources belong to this
// cluster's runtime: the cluster tags it puts on everything it creates, and
// the check it makes before it changes or deletes anything it found by name
// or by listing. Several clusters may share an account; a resource that
// fails the check is left alone.
package ownership

import (
	"fmt"
	"maps"
	"slices"
)

// NodeClaimTag names the NodeClaim an instance was launched for.
const NodeClaimTag = "karpenter.sh/nodeclaim"

// EKSClusterNameTag carries the cluster's name on every created resource.
const EKSClusterNameTag = "eks:eks-cluster-name"

// ClusterTag is the key kubernetes.io/cluster/<cluster>, valued "owned".
func ClusterTag(cluster string) string { return "kubernetes.io/cluster/" + cluster }

// ClusterTags are the tags that mark a resource as the cluster's.
func ClusterTags(cluster string) map[string]string {
	return map[string]string{ClusterTag(cluster): "owned", EKSClusterNameTag: cluster}
}

// Check returns nil when tags mark a resource as the cluster's (both
// cluster tags) and carry every key of want: with that value, or with any
// value when want's value is empty. The error names the first tag that
// differs, so a log says why a resource was left alone.
func Check(tags map[string]string, cluster string, want map[string]string) error {
	all := ClusterTags(cluster)
	for k, v := range want {
		all[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(all)) {
		got, ok := tags[k]
		switch {
		case !ok:
			return fmt.Errorf("it has no %s tag, so it is not cluster %s's", k, cluster)
		case all[k] != "" && got != all[k]:
			return fmt.Errorf("its %s tag is %q, not %q, so it is not cluster %s's", k, got, all[k], cluster)
		}
	}
	return nil
}

// Marked reports whether tags name the cluster (either cluster tag with
// its value) and carry key: a resource that says it is the cluster's,
// which Check may still refuse (a tag removed or changed by hand). Such a
// resource is left alone like any other that fails Check, but it is worth
// telling the user about: it runs, and is billed, with nobody managing it.
func Marked(tags map[string]string, cluster, key string) bool {
	if _, ok := tags[key]; !ok {
		return false
	}
	for k, v := range ClusterTags(cluster) {
		if tags[k] == v {
			return true
		}
	}
	return false
}
