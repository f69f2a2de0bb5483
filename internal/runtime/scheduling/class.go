package scheduling

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
)

// class is a set of interchangeable pending pods: same namespace, labels,
// requests, scheduling constraints, volume topology and owner. Relaxing a
// preference changes the class's constraint state for all its pods at once.
type class struct {
	// Fields the fill simulation reads for every class it visits come
	// first, so that a visit touches one cache line.
	pods      []*corev1.Pod // still to place, in queue order
	req       []int64
	promised  int      // pods expected to fill claims sized with them in mind
	freshCap  int      // pods per fresh node
	poolTypes []bitset // compatible types by pool index
	poolKnown []bool

	ns     string
	labels map[string]string
	ports  []hostPort

	tolerations   []corev1.Toleration
	toleratePNS   bool
	nodeTerms     []requirements.Requirements // nodeSelector ∧ each required term, in order
	prefNode      []requirements.Requirements // heaviest first
	volumeAlts    []requirements.Requirements
	affinity      []*topoGroup // required pod affinity
	prefAffinity  []*topoGroup // heaviest first
	anti          []*topoGroup
	prefAnti      []*topoGroup
	spreads       []*topoGroup // DoNotSchedule
	softSpreads   []*topoGroup // ScheduleAnyway
	selectedBy    []*topoGroup // groups whose selector matches these pods
	requiredAntis []*topoGroup // anti groups recording where these pods are (inverse anti-affinity)
	heldBy        []*topoGroup // DoNotSchedule spread groups that select these pods (inverse spread)
	looseHeld     bool         // relaxed: heldBy no longer bounds where these pods go
	relaxed       []string

	// strictID: pod requirements (for spread node filters); reqID adds the
	// volume topology and is what nodes and claims must satisfy.
	strictID, reqID int
	lastErr         error

	actAff, actAnti, actSpread []*topoGroup
	hostTopo                   bool // some active group is keyed by hostname
	hostInverse                bool // some hostname anti-affinity group selects c
}

type hostPort struct {
	ip       string
	protocol corev1.Protocol
	port     int32
}

func (a hostPort) conflicts(b hostPort) bool {
	if a.port != b.port || a.protocol != b.protocol {
		return false
	}
	return a.ip == b.ip || a.ip == "" || a.ip == "0.0.0.0" || b.ip == "" || b.ip == "0.0.0.0"
}

func podHostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	for _, p := range PodHostPorts(pod) {
		out = append(out, hostPort{ip: p.HostIP, protocol: p.Protocol, port: p.HostPort})
	}
	return out
}

// PodHostPorts lists the ports pod's containers (init containers included)
// bind on the host, with the protocol defaulted to TCP.
func PodHostPorts(pod *corev1.Pod) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	add := func(cs []corev1.Container) {
		for _, c := range cs {
			for _, p := range c.Ports {
				if p.HostPort == 0 {
					continue
				}
				if p.Protocol == "" {
					p.Protocol = corev1.ProtocolTCP
				}
				out = append(out, p)
			}
		}
	}
	add(pod.Spec.InitContainers)
	add(pod.Spec.Containers)
	return out
}

func portsConflict(have, add []hostPort) bool {
	for _, a := range add {
		for _, h := range have {
			if a.conflicts(h) {
				return true
			}
		}
	}
	return false
}

// classKey identifies pods the solver may treat identically.
func classKey(pod *corev1.Pod, req []int64, volumes [][]corev1.NodeSelectorRequirement) string {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteByte('|')
	writeMap(&b, pod.Labels)
	for _, v := range req {
		b.WriteString(strconv.FormatInt(v, 36))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	writeMap(&b, pod.Spec.NodeSelector)
	if a := pod.Spec.Affinity; a != nil {
		data, _ := a.Marshal()
		b.Write(data)
	}
	b.WriteByte('|')
	for i := range pod.Spec.Tolerations {
		data, _ := pod.Spec.Tolerations[i].Marshal()
		b.Write(data)
	}
	b.WriteByte('|')
	for i := range pod.Spec.TopologySpreadConstraints {
		data, _ := pod.Spec.TopologySpreadConstraints[i].Marshal()
		b.Write(data)
	}
	b.WriteByte('|')
	for _, p := range podHostPorts(pod) {
		fmt.Fprintf(&b, "%s/%s/%d,", p.ip, p.protocol, p.port)
	}
	b.WriteByte('|')
	if ref := metav1.GetControllerOf(pod); ref != nil {
		b.WriteString(string(ref.UID))
	}
	b.WriteByte('|')
	for _, alt := range volumes {
		for i := range alt {
			data, _ := alt[i].Marshal()
			b.Write(data)
		}
		b.WriteByte(';')
	}
	return b.String()
}

func writeMap(b *strings.Builder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k])
		b.WriteByte(',')
	}
	b.WriteByte('|')
}

// buildConstraints parses the node-level constraints of the class's first
// pod; topology terms are attached by the topology index.
func (c *class) buildConstraints(pod *corev1.Pod, volumes [][]corev1.NodeSelectorRequirement) error {
	c.tolerations = pod.Spec.Tolerations
	sel := requirements.FromLabels(pod.Spec.NodeSelector)
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			for _, term := range r.NodeSelectorTerms {
				reqs, err := requirements.FromNodeSelectorTerm(term)
				if err != nil {
					return fmt.Errorf("spec.affinity.nodeAffinity.required: %w", err)
				}
				c.nodeTerms = append(c.nodeTerms, sel.Intersect(reqs))
			}
		}
		prefs := append([]corev1.PreferredSchedulingTerm(nil), a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
		sort.SliceStable(prefs, func(i, j int) bool { return prefs[i].Weight > prefs[j].Weight })
		for _, p := range prefs {
			reqs, err := requirements.FromNodeSelectorTerm(p.Preference)
			if err != nil {
				return fmt.Errorf("spec.affinity.nodeAffinity.preferred: %w", err)
			}
			c.prefNode = append(c.prefNode, reqs)
		}
	}
	if len(c.nodeTerms) == 0 {
		c.nodeTerms = []requirements.Requirements{sel}
	}
	for _, alt := range volumes {
		reqs, err := requirements.FromNodeSelectorRequirements(alt, nil)
		if err != nil {
			return fmt.Errorf("volume topology: %w", err)
		}
		c.volumeAlts = append(c.volumeAlts, reqs)
	}
	for _, terms := range append(append([]requirements.Requirements{}, c.nodeTerms...), c.prefNode...) {
		if terms.Has(labelHostname) {
			return fmt.Errorf("node selector or affinity uses the restricted label %s; Karpenter-style provisioning cannot target a node by name", labelHostname)
		}
	}
	return nil
}

// strict is what the pod itself requires now (first remaining required
// term plus the heaviest remaining preference).
func (c *class) strict() requirements.Requirements {
	out := c.nodeTerms[0]
	if len(c.prefNode) > 0 {
		out = out.Intersect(c.prefNode[0])
	}
	return out
}

func (c *class) withVolumes(r requirements.Requirements) requirements.Requirements {
	if len(c.volumeAlts) == 0 {
		return r
	}
	return r.Intersect(c.volumeAlts[0])
}

// tolerates reports whether the class tolerates every taint (Karpenter
// checks all effects; PreferNoSchedule only once relaxed).
func (c *class) tolerates(taints []corev1.Taint) error {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule && c.toleratePNS {
			continue
		}
		ok := false
		for j := range c.tolerations {
			if toleratesTaint(&c.tolerations[j], t) {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("does not tolerate taint %s", t.ToString())
		}
	}
	return nil
}

func (c *class) topologyConstraints() [][]*topoGroup {
	return [][]*topoGroup{c.affinity, c.prefAffinity, c.anti, c.prefAnti, c.spreads, c.softSpreads}
}

// toleratesTaint is the core toleration rule: effect matches (or is empty),
// key matches (an empty key with Exists matches every key), and the value
// matches for Equal.
func toleratesTaint(tol *corev1.Toleration, t *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return tol.Key != "" && tol.Value == t.Value
	}
	return false
}
