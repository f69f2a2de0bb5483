package provisioning_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/provisioning"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// threeTypes asks for three distinct instance types of which the simulated
// AWS sells two: no pod's claim can meet it.
func threeTypes() v1.NodeSelectorRequirementWithMinValues {
	three := 3
	return v1.NodeSelectorRequirementWithMinValues{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn,
		Values: []string{"c5.large", "c5.xlarge", "c5.nosuchsize"}, MinValues: &three}
}

// Under BestEffort the claim carries the minValues its options meet, which
// the NodeClaim CRD accepts (In with minValues 3 over two values it would
// reject), and is marked relaxed; the pod is nominated to it.
func TestScheduleMinValuesBestEffortCreatesRelaxedClaim(t *testing.T) {
	w := newWorldWith(t, provisioning.Options{NominationTTL: time.Hour, Solver: scheduling.Options{MinValuesPolicy: scheduling.MinValuesBestEffort}}, threeTypes())
	web := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}}
	w.pendingPod(t, web)

	res := w.schedule(t)
	if len(res.Created) != 1 || len(res.Unassigned) != 0 {
		t.Fatalf("created %d nodeclaims, unassigned %q: want one claim for web", len(res.Created), reasons(res))
	}
	claim := &v1.NodeClaim{}
	must(t, w.kube.Get(context.Background(), client.ObjectKey{Name: res.Created[0].Name}, claim))
	if claim.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey] != "true" {
		t.Errorf("annotation %s=%q, want true", v1.NodeClaimMinValuesRelaxedAnnotationKey, claim.Annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey])
	}
	i := slices.IndexFunc(claim.Spec.Requirements, func(r v1.NodeSelectorRequirementWithMinValues) bool { return r.Key == corev1.LabelInstanceTypeStable })
	if i < 0 {
		t.Fatalf("claim has no instance-type requirement: %+v", claim.Spec.Requirements)
	}
	r := claim.Spec.Requirements[i]
	if !slices.Equal(r.Values, []string{"c5.large", "c5.xlarge"}) || r.MinValues == nil || *r.MinValues != 2 {
		t.Errorf("instance-type requirement %v minValues %v, want [c5.large c5.xlarge] with minValues relaxed to 2", r.Values, r.MinValues)
	}
	if n, ok := w.cluster.NominatedTo(web.UID); !ok || n.Target != claim.Name {
		t.Errorf("web nominated to %+v (%v), want %s", n, ok, claim.Name)
	}
}

// Under Strict no claim is made and the NodePool is told, with Karpenter's
// reason and message.
func TestScheduleMinValuesStrictTellsTheNodePool(t *testing.T) {
	w := newWorldWith(t, provisioning.Options{NominationTTL: time.Hour, Solver: scheduling.Options{MinValuesPolicy: scheduling.MinValuesStrict}}, threeTypes())
	w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}})

	res := w.schedule(t)
	if len(res.Created) != 0 || !strings.Contains(unassigned(res, "web"), "minValues") {
		t.Fatalf("created %d nodeclaims, unassigned %q: want web unschedulable for minValues", len(res.Created), reasons(res))
	}
	const want = "NodePool requirements filtered out all compatible available instance types due to minValues incompatibility"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		var list eventsv1.EventList
		must(t, w.kube.List(context.Background(), &list))
		found := slices.ContainsFunc(list.Items, func(e eventsv1.Event) bool {
			return e.Regarding.Kind == "NodePool" && e.Regarding.Name == "general" && e.Reason == events.NoCompatibleInstanceTypes &&
				e.Type == corev1.EventTypeWarning && e.Note == want
		})
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s event on NodePool general saying %q; events: %+v", events.NoCompatibleInstanceTypes, want, list.Items)
		}
	}
}
