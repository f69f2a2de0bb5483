package benchfixture_test

import (
	"math/rand"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/hack/benchfixture"
)

// TestDiversePodsKinds: a fifth of each kind, the remainder generic, every
// pod pending with a distinct UID (Karpenter's scheduler caches by UID).
func TestDiversePodsKinds(t *testing.T) {
	pods := benchfixture.DiversePods(1003, rand.New(rand.NewSource(42)))
	kinds := map[string]int{}
	uids := map[string]bool{}
	for _, p := range pods {
		switch {
		case len(p.Spec.TopologySpreadConstraints) == 1:
			kinds["spread "+p.Spec.TopologySpreadConstraints[0].TopologyKey]++
		case p.Spec.Affinity != nil && p.Spec.Affinity.PodAffinity != nil:
			kinds["affinity"]++
		case p.Spec.Affinity != nil && p.Spec.Affinity.PodAntiAffinity != nil:
			kinds["anti-affinity"]++
		case strings.HasPrefix(p.Name, "generic-"):
			kinds["generic"]++
		}
		if p.Status.Phase != corev1.PodPending || uids[string(p.UID)] {
			t.Fatalf("pod %s: phase %q, UID %q seen before: %v", p.Name, p.Status.Phase, p.UID, uids[string(p.UID)])
		}
		uids[string(p.UID)] = true
	}
	want := map[string]int{"generic": 203, "spread " + corev1.LabelTopologyZone: 200, "spread " + corev1.LabelHostname: 200, "affinity": 200, "anti-affinity": 200}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s: %d pods, want %d (all: %v)", k, kinds[k], n, kinds)
		}
	}
}

// TestInstanceTypes: the 400 types load with allocatable and offerings.
func TestInstanceTypes(t *testing.T) {
	its, err := benchfixture.InstanceTypes()
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 400 {
		t.Fatalf("%d types, want 400", len(its))
	}
	for _, it := range its {
		if cpu := it.Allocatable[corev1.ResourceCPU]; cpu.IsZero() || len(it.Offerings) == 0 {
			t.Fatalf("%s: allocatable CPU %s, %d offerings", it.Name, cpu.String(), len(it.Offerings))
		}
	}
}
