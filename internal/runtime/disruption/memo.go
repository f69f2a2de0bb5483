package disruption

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// ConsolidatedTimeout is how long a pass in which consolidation found
// nothing lets later passes skip it while the cluster does not change, as
// Karpenter's consolidation state does: after it, consolidation looks
// again in case something no fingerprint sees (a spot price, an offering
// coming back) has changed.
const ConsolidatedTimeout = 5 * time.Minute

// consolidatedMemo records the last pass in which multi-node and
// single-node consolidation ran to the end and found nothing.
type consolidatedMemo struct {
	fingerprint uint64
	at          time.Time
}

// holds reports whether fp is the cluster consolidation found nothing in,
// within ConsolidatedTimeout of then.
func (m consolidatedMemo) holds(fp uint64, now time.Time) bool {
	return !m.at.IsZero() && m.fingerprint == fp && now.Sub(m.at) < ConsolidatedTimeout
}

// consolidationFingerprint hashes everything consolidation decides from:
// the nodes (labels, annotations, taints, readiness, allocatable and their
// NodeClaim's version), the pods on them or nominated to them (by version),
// the NodePools, DaemonSets, LimitRanges, namespace labels and
// PodDisruptionBudgets, the commands holding nodes, the disruption budgets
// and the instance types with their offerings. Two equal fingerprints mean
// a consolidation search would see the same cluster, so one that found
// nothing would find nothing again.
func consolidationFingerprint(env *Env, budgets Budgets) uint64 {
	h := fnv.New64a()
	str := func(s string) {
		_, _ = h.Write([]byte(s))
		_, _ = h.Write([]byte{0})
	}
	num := func(v uint64) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], v)
		_, _ = h.Write(b[:])
	}
	flag := func(b bool) {
		if b {
			num(1)
		} else {
			num(0)
		}
	}
	nodes := slices.Clone(env.Snapshot.Nodes)
	slices.SortFunc(nodes, func(a, b *state.StateNode) int { return cmp.Compare(a.Name(), b.Name()) })
	for _, n := range nodes {
		str(n.Name())
		flag(n.Leaving)
		if n.Node != nil {
			writeNode(str, num, n.Node)
		}
		if n.NodeClaim != nil {
			str(n.NodeClaim.Name)
			str(n.NodeClaim.ResourceVersion)
			flag(n.NodeClaim.DeletionTimestamp != nil)
		}
		for _, group := range [][]*corev1.Pod{n.Pods, n.Nominated} {
			num(uint64(len(group)))
			// The snapshot lists a node's pods in no set order.
			group = slices.Clone(group)
			slices.SortFunc(group, func(a, b *corev1.Pod) int { return cmp.Compare(a.UID, b.UID) })
			for _, p := range group {
				str(string(p.UID))
				str(p.ResourceVersion)
			}
		}
	}
	for _, p := range env.Snapshot.NodePools {
		str(p.Name)
		str(p.ResourceVersion)
		// The cluster-wide pause is in no NodePool's version.
		str(env.Holds[p.Name].Message)
	}
	// DaemonSets take room on every node and on replacements alike; the
	// Snapshot lists them in no set order.
	dss := make([]string, 0, len(env.Snapshot.DaemonSets))
	for _, ds := range env.Snapshot.DaemonSets {
		dss = append(dss, fmt.Sprintf("%s/%s/%d/%t", ds.Namespace, ds.Name, ds.Generation, ds.DeletionTimestamp != nil))
	}
	slices.Sort(dss)
	for _, ds := range dss {
		str(ds)
	}
	// LimitRanges default the DaemonSet pods' requests.
	for _, ns := range slices.Sorted(maps.Keys(env.Snapshot.LimitRanges)) {
		for _, lr := range env.Snapshot.LimitRanges[ns] {
			str(ns + "/" + lr.Name)
			str(lr.ResourceVersion)
		}
	}
	// Namespace labels decide which pods an affinity's namespaceSelector
	// counts.
	for _, ns := range slices.Sorted(maps.Keys(env.Snapshot.NamespaceLabels)) {
		str(ns)
		labels := env.Snapshot.NamespaceLabels[ns]
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			str(k)
			str(labels[k])
		}
	}
	env.PDBs.write(str, num)
	for _, name := range slices.Sorted(maps.Keys(env.Queued)) {
		str(name)
	}
	for _, pool := range slices.Sorted(maps.Keys(budgets)) {
		str(pool)
		num(uint64(budgets[pool]))
	}
	for _, pool := range slices.Sorted(maps.Keys(env.InstanceTypes)) {
		str(pool)
		for _, it := range env.InstanceTypes[pool] {
			str(it.Name)
			for _, q := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
				v := it.Allocatable[q]
				num(uint64(v.MilliValue()))
			}
			for _, o := range it.Offerings {
				str(o.Zone)
				str(o.CapacityType)
				str(o.ReservationID)
				num(math.Float64bits(o.Price))
				num(uint64(o.ReservationCapacity))
				flag(o.Available)
			}
		}
	}
	return h.Sum64()
}

// writeNode hashes what a Node contributes: labels, annotations (a
// do-not-disrupt one, say), taints, whether it is schedulable, Ready and
// being deleted, and its allocatable.
func writeNode(str func(string), num func(uint64), node *corev1.Node) {
	for _, kv := range []map[string]string{node.Labels, node.Annotations} {
		num(uint64(len(kv)))
		for _, k := range slices.Sorted(maps.Keys(kv)) {
			str(k)
			str(kv[k])
		}
	}
	for _, t := range node.Spec.Taints {
		str(t.Key)
		str(t.Value)
		str(string(t.Effect))
	}
	num(uint64(len(node.Spec.Taints)))
	if node.Spec.Unschedulable {
		str("unschedulable")
	}
	if node.DeletionTimestamp != nil {
		str("deleting")
	}
	if state.IsNodeReady(node) {
		str("ready")
	}
	for _, q := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods} {
		v := node.Status.Allocatable[q]
		num(uint64(v.MilliValue()))
	}
}
