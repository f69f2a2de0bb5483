package v1

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func hashTestNodePool() *NodePool {
	return &NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: NodePoolSpec{
			Template: NodeClaimTemplate{
				ObjectMeta: ObjectMeta{
					Labels:      map[string]string{"team": "a", "tier": "web", "example.com/owner": "ops"},
					Annotations: map[string]string{"example.com/note": "x"},
				},
				Spec: NodeClaimTemplateSpec{
					Taints: []corev1.Taint{
						{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoSchedule},
						{Key: "example.com/gpu", Effect: corev1.TaintEffectNoExecute},
					},
					StartupTaints: []corev1.Taint{{Key: "example.com/agent", Effect: corev1.TaintEffectNoSchedule}},
					Requirements: Requirements{
						{Key: CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{CapacityTypeSpot}},
					},
					NodeClassRef:           &NodeClassReference{Group: AWSGroup, Kind: "EC2NodeClass", Name: "default"},
					ExpireAfter:            MustParseNillableDuration("720h"),
					TerminationGracePeriod: &metav1.Duration{Duration: time.Hour},
				},
			},
			Disruption: Disruption{
				ConsolidateAfter:    MustParseNillableDuration("0s"),
				ConsolidationPolicy: ConsolidationPolicyWhenEmptyOrUnderutilized,
				Budgets:             []Budget{{Nodes: "10%"}},
			},
			Weight: ptr[int32](10),
			Limits: Limits{corev1.ResourceCPU: resource.MustParse("1000")},
		},
	}
}

// upstreamHashes are the hashes Karpenter v1.15 computes of the fixtures in
// ../testdata/hash (see its README for how they were produced).
type upstreamHashes struct {
	NodePoolHashVersion string            `json:"nodePoolHashVersion"`
	NodePools           map[string]string `json:"nodePools"`
}

// TestNodePoolHashIsKarpenters checks that the NodePool hash and its version
// are Karpenter's, so karpenter.sh/nodepool-hash means the same to both and
// nodes survive a move between them without drifting.
func TestNodePoolHashIsKarpenters(t *testing.T) {
	var want upstreamHashes
	readFixture(t, "upstream.json", &want)
	var pools []NodePool
	readFixture(t, "nodepools.yaml", &pools)
	if NodePoolHashVersion != want.NodePoolHashVersion {
		t.Errorf("NodePoolHashVersion = %s, Karpenter's is %s", NodePoolHashVersion, want.NodePoolHashVersion)
	}
	if len(pools) != len(want.NodePools) {
		t.Fatalf("%d fixtures, %d upstream hashes", len(pools), len(want.NodePools))
	}
	for i := range pools {
		if got := pools[i].Hash(); got != want.NodePools[pools[i].Name] {
			t.Errorf("NodePool %s: hash %s, Karpenter's is %s", pools[i].Name, got, want.NodePools[pools[i].Name])
		}
	}
}

// readFixture decodes a fixture; objects strictly, so a field Joist's types
// lack fails the test rather than hashing as absent.
func readFixture(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "hash", name))
	if err != nil {
		t.Fatal(err)
	}
	decode := yaml.UnmarshalStrict
	if filepath.Ext(name) == ".json" {
		decode = yaml.Unmarshal
	}
	if err := decode(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestNodePoolHashIgnoresBehaviouralFields(t *testing.T) {
	base := hashTestNodePool().Hash()
	for name, mutate := range map[string]func(*NodePool){
		"weight":              func(np *NodePool) { np.Spec.Weight = ptr[int32](90) },
		"no weight":           func(np *NodePool) { np.Spec.Weight = nil },
		"limits":              func(np *NodePool) { np.Spec.Limits = Limits{corev1.ResourceMemory: resource.MustParse("1Ti")} },
		"consolidation":       func(np *NodePool) { np.Spec.Disruption.ConsolidationPolicy = ConsolidationPolicyWhenEmpty },
		"consolidateAfter":    func(np *NodePool) { np.Spec.Disruption.ConsolidateAfter = NillableDuration{} },
		"budgets":             func(np *NodePool) { np.Spec.Disruption.Budgets = []Budget{{Nodes: "0"}} },
		"status":              func(np *NodePool) { np.Status.Nodes = ptr[int64](3) },
		"name":                func(np *NodePool) { np.Name = "other" },
		"expireAfter respelt": func(np *NodePool) { np.Spec.Template.Spec.ExpireAfter = MustParseNillableDuration("720h0m0s") },
		// Requirements are excluded from the static hash (as in Karpenter):
		// requirement drift compares them with each node's labels instead.
		"requirements": func(np *NodePool) {
			np.Spec.Template.Spec.Requirements = Requirements{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}
		},
		"taint order": func(np *NodePool) {
			taints := np.Spec.Template.Spec.Taints
			np.Spec.Template.Spec.Taints = []corev1.Taint{taints[1], taints[0]}
		},
		"labels rebuilt in another order": func(np *NodePool) {
			labels := map[string]string{}
			for _, k := range []string{"tier", "example.com/owner", "team"} {
				labels[k] = np.Spec.Template.Labels[k]
			}
			np.Spec.Template.Labels = labels
		},
		"empty annotations vs nil": func(np *NodePool) {
			np.Spec.Template.Annotations = map[string]string{"example.com/note": "x"}
			np.Spec.Template.Spec.StartupTaints = append(np.Spec.Template.Spec.StartupTaints, []corev1.Taint{}...)
		},
	} {
		np := hashTestNodePool()
		mutate(np)
		if got := np.Hash(); got != base {
			t.Errorf("changing %s changed the hash (%s -> %s)", name, base, got)
		}
	}
}

func TestNodePoolHashTracksTemplateFields(t *testing.T) {
	base := hashTestNodePool().Hash()
	seen := map[string]string{}
	for name, mutate := range map[string]func(*NodePool){
		"label value":       func(np *NodePool) { np.Spec.Template.Labels["team"] = "b" },
		"label added":       func(np *NodePool) { np.Spec.Template.Labels["new"] = "x" },
		"labels removed":    func(np *NodePool) { np.Spec.Template.Labels = nil },
		"annotation":        func(np *NodePool) { np.Spec.Template.Annotations["example.com/note"] = "y" },
		"taint effect":      func(np *NodePool) { np.Spec.Template.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute },
		"taint removed":     func(np *NodePool) { np.Spec.Template.Spec.Taints = np.Spec.Template.Spec.Taints[:1] },
		"startup taint":     func(np *NodePool) { np.Spec.Template.Spec.StartupTaints = nil },
		"nodeClassRef name": func(np *NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "other" },
		"expireAfter":       func(np *NodePool) { np.Spec.Template.Spec.ExpireAfter = MustParseNillableDuration("24h") },
		"expireAfter never": func(np *NodePool) { np.Spec.Template.Spec.ExpireAfter = NillableDuration{} },
		"tgp": func(np *NodePool) {
			np.Spec.Template.Spec.TerminationGracePeriod = &metav1.Duration{Duration: 2 * time.Hour}
		},
		"tgp removed": func(np *NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = nil },
	} {
		np := hashTestNodePool()
		mutate(np)
		got := np.Hash()
		if got == base {
			t.Errorf("changing %s kept the hash", name)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("changing %s and %s gave the same hash", name, other)
		}
		seen[got] = name
	}
}
