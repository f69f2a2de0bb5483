package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// testBalanced builds the same three nodes in two pools, one consolidating
// WhenEmptyOrUnderutilized and one Balanced, and checks that each removes
// the nodes Karpenter's scoring says:
//   - x: m5.xlarge ($0.192/h) running a 3.5-CPU pod, launched while the
//     pool allowed only m5.xlarge; the pool is then widened to c5.large and
//     c5.xlarge (no drift: x still satisfies it);
//   - y: c5.large ($0.085/h) running a 1-CPU pod;
//   - z: c5.xlarge ($0.170/h) running a 2-CPU pod with do-not-disrupt: not
//     a candidate, but it counts in the pool's totals and has room for
//     y's pod.
//
// WhenEmptyOrUnderutilized replaces x and y with one c5.xlarge (multi-node,
// y's pod moving to z). Balanced scores that move (0.107/0.447)/(4/6) =
// 0.36 < 0.5 and rejects it, rejects replacing x alone by a c5.xlarge
// ((0.022/0.447)/(2/6) = 0.15), and deletes y: (0.085/0.447)/(2/6) = 0.57.
// (Each node also pays for its root volume, about $0.002/h, which moves
// none of these scores across 0.5.)
func testBalanced(t *testing.T) {
	nodeClass(t, "balanced")
	type setup struct {
		pool    string
		ns      string
		x, y, z string // NodeClaim names
	}
	setups := []*setup{{pool: "balanced-weou"}, {pool: "balanced-balanced"}}
	only := func(types ...string) v1.NodeSelectorRequirementWithMinValues {
		return req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, types...)
	}
	for _, s := range setups {
		s.ns = scenarioNamespace(t, "e2e-"+s.pool)
		consolidatingPool(t, s.pool, "Never", func(np *v1.NodePool) {
			np.Spec.Template.Spec.NodeClassRef.Name = "balanced"
			np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements[:3], only("m5.xlarge"))
		})
	}
	for _, s := range setups {
		create(t, deployment(s.ns, "x", 1, podSpec(s.pool, requests("3500m", "1Gi"))))
	}
	for _, s := range setups {
		s.x = claimOfApp(t, s.ns, "x", s.pool)
		updatePool(t, s.pool, func(np *v1.NodePool) {
			np.Spec.Template.Spec.Requirements[3] = only("m5.xlarge", "c5.large", "c5.xlarge")
		})
		create(t, deployment(s.ns, "y", 1, podSpec(s.pool, requests("1", "1Gi"))))
	}
	for _, s := range setups {
		s.y = claimOfApp(t, s.ns, "y", s.pool)
		spec := podSpec(s.pool, requests("2", "1Gi"))
		d := deployment(s.ns, "z", 1, spec)
		d.Spec.Template.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
		create(t, d)
	}
	for _, s := range setups {
		s.z = claimOfApp(t, s.ns, "z", s.pool)
		for name, want := range map[string]string{s.x: "m5.xlarge", s.y: "c5.large", s.z: "c5.xlarge"} {
			if got := claimType(t, name); got != want {
				t.Fatalf("%s: NodeClaim %s is a %s, the scenario needs a %s", s.pool, name, got, want)
			}
		}
	}
	// Each claim turns Consolidatable on its own reconcile. Were the
	// policies set with consolidateAfter, a pass could see y a candidate
	// before x and delete it alone, never scoring the moves with x. So the
	// claims become Consolidatable under WhenEmpty, which leaves these
	// non-empty nodes alone, and only then is each policy set.
	for _, s := range setups {
		updatePool(t, s.pool, func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = v1.ConsolidationPolicyWhenEmpty
			np.Spec.Disruption.ConsolidateAfter = v1.MustParseNillableDuration("5s")
		})
	}
	for _, s := range setups {
		eventually(t, s.pool+": x, y and z Consolidatable", func() (bool, string) {
			var not []string
			for _, name := range []string{s.x, s.y, s.z} {
				c := &v1.NodeClaim{}
				if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
					return false, err.Error()
				}
				if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeConsolidatable) {
					not = append(not, name)
				}
			}
			return len(not) == 0, fmt.Sprintf("not yet: %v", not)
		})
	}
	for _, s := range setups {
		if got := claimNames(t, s.pool); len(got) != 3 {
			t.Fatalf("%s: WhenEmpty disrupted a node with pods: claims %v", s.pool, got)
		}
	}
	for i, s := range setups {
		policy := []v1.ConsolidationPolicy{v1.ConsolidationPolicyWhenEmptyOrUnderutilized, v1.ConsolidationPolicyBalanced}[i]
		updatePool(t, s.pool, func(np *v1.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = policy
		})
	}

	weou, bal := setups[0], setups[1]
	eventually(t, "WhenEmptyOrUnderutilized replaces x and y with one c5.xlarge", func() (bool, string) {
		claims := claimsOf(t, weou.pool)
		var names, extra []string
		for _, c := range claims {
			names = append(names, c.Name)
			if c.Name != weou.z && c.Name != weou.x && c.Name != weou.y && c.Status.ProviderID != "" {
				extra = append(extra, c.Labels[corev1.LabelInstanceTypeStable])
			}
		}
		ok := len(claims) == 2 && slices.Contains(names, weou.z) && slices.Equal(extra, []string{"c5.xlarge"})
		return ok, fmt.Sprintf("claims %v, new ones %v", names, extra)
	})
	eventually(t, "Balanced deletes y", func() (bool, string) {
		names := claimNames(t, bal.pool)
		return len(claimsOf(t, bal.pool)) == 2, fmt.Sprintf("claims %v", names)
	})
	if got, want := claimNames(t, bal.pool), sorted(bal.x, bal.z); !slices.Equal(got, want) {
		t.Fatalf("Balanced kept %v, want x and z %v (y %s deleted)", got, want, bal.y)
	}
	// The scored moves are counted under Karpenter's names: the rejected
	// ones and y's approved delete.
	for _, decision := range []string{"approved", "rejected"} {
		for _, name := range []string{"karpenter_consolidation_moves_total", "karpenter_consolidation_score_count"} {
			series := fmt.Sprintf(`%s{decision=%q,nodepool=%q,policy="Balanced"}`, name, decision, bal.pool)
			if v, ok, err := worldOf(t).controller.metric(series); err != nil || !ok || v == 0 {
				t.Errorf("%s = %v (present %v, err %v), want above 0", series, v, ok, err)
			}
		}
	}
}

// claimOfApp waits until the app's pod runs, and returns the NodeClaim of
// its node.
func claimOfApp(t *testing.T, ns, app, pool string) string {
	t.Helper()
	var claim string
	eventually(t, fmt.Sprintf("%s/%s Running on a NodeClaim of %s", ns, app, pool), func() (bool, string) {
		ps := pods(t, ns, map[string]string{"app": app})
		if len(ps) != 1 || ps[0].Status.Phase != corev1.PodRunning {
			return false, fmt.Sprintf("%d pods", len(ps))
		}
		for _, c := range claimsOf(t, pool) {
			if c.Status.NodeName == ps[0].Spec.NodeName {
				claim = c.Name
				return true, ""
			}
		}
		return false, "no NodeClaim for node " + ps[0].Spec.NodeName
	})
	return claim
}

func claimType(t *testing.T, name string) string {
	t.Helper()
	c := &v1.NodeClaim{}
	if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
		t.Fatal(err)
	}
	return c.Labels[corev1.LabelInstanceTypeStable]
}

func updatePool(t *testing.T, name string, edit func(*v1.NodePool)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		np := &v1.NodePool{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, np); err != nil {
			return err
		}
		edit(np)
		return worldOf(t).kube.Update(context.Background(), np)
	})
	if err != nil {
		t.Fatalf("updating NodePool %s: %v", name, err)
	}
}

func sorted(s ...string) []string {
	sort.Strings(s)
	return s
}
