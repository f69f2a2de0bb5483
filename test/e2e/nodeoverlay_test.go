package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
)

// overlayClass is the EC2NodeClass of the NodeOverlay scenarios.
const overlayClass = "nodeoverlay"

// testNodeOverlay: NodeOverlays change what the controller launches. Each
// overlay selects its scenario's pool only, so the other scenarios of the
// world see no change.
func testNodeOverlay(t *testing.T) {
	nodeClass(t, overlayClass)
	t.Run("independent", func(t *testing.T) {
		t.Run("price", testOverlayPrice)
		t.Run("extended-resource", testOverlayExtendedResource)
		t.Run("conflict", testOverlayConflict)
	})
}

// nodeOverlay creates the overlay and waits until the controller reports it
// applied (Ready), which it does only after the evaluation that applies it.
func nodeOverlay(t *testing.T, o *v1alpha1.NodeOverlay) {
	t.Helper()
	create(t, o)
	eventually(t, "NodeOverlay "+o.Name+" Ready", func() (bool, string) {
		got := &v1alpha1.NodeOverlay{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: o.Name}, got); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != got.Generation {
			return false, fmt.Sprintf("conditions %v", got.Status.Conditions)
		}
		return true, ""
	})
}

// launchedType waits for the pool's nodeclaim count to reach want and
// returns the instance type of the one not in seen.
func launchedType(t *testing.T, pool string, want int, seen map[string]bool) (claim, instanceType string) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d nodeclaims of %s launched", want, pool), func() (bool, string) {
		claims := claimsOf(t, pool)
		for _, c := range claims {
			if !seen[c.Name] && c.Labels[corev1.LabelInstanceTypeStable] != "" {
				claim, instanceType = c.Name, c.Labels[corev1.LabelInstanceTypeStable]
			}
		}
		return len(claims) == want && instanceType != "", fmt.Sprintf("%d nodeclaims", len(claims))
	})
	return claim, instanceType
}

// testOverlayPrice: a pool of two instance types launches the cheaper; a
// NodeOverlay that makes that type dearer flips the next launch to the
// other type, though EC2's own prices did not change.
func testOverlayPrice(t *testing.T) {
	t.Parallel()
	const pool = "overlay-price"
	types := []string{"c5.large", "m5.large"}
	ns := namespace(t, "e2e-overlay-price")
	nodePool(t, pool, overlayClass, nil, onDemand, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, types...))
	// 1.5 CPU: one pod per 2-vCPU node, so the second pod needs a new node.
	spec := podSpec(pool, requests("1500m", "1Gi"))
	create(t, deployment(ns, "first", 1, spec))
	firstClaim, first := launchedType(t, pool, 1, nil)
	if !slices.Contains(types, first) {
		t.Fatalf("launched %s, want one of %v", first, types)
	}
	nodeOverlay(t, &v1alpha1.NodeOverlay{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-overlay-price"},
		Spec: v1alpha1.NodeOverlaySpec{
			Requirements: []v1alpha1.NodeSelectorRequirement{
				{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}},
				{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{first}},
			},
			PriceAdjustment: new("+1000%"),
		},
	})
	create(t, deployment(ns, "second", 1, spec))
	secondClaim, second := launchedType(t, pool, 2, map[string]bool{firstClaim: true})
	if second == first || !slices.Contains(types, second) {
		t.Fatalf("after %s's price was raised tenfold the pool launched %s, want the other of %v", first, second, types)
	}
	for name, want := range map[string]string{firstClaim: "", secondClaim: "true"} {
		c := &v1.NodeClaim{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, c); err != nil {
			t.Fatal(err)
		}
		if got := c.Annotations[v1alpha1.PriceOverlayAppliedAnnotationKey]; got != want {
			t.Errorf("nodeclaim %s: %s=%q, want %q", name, v1alpha1.PriceOverlayAppliedAnnotationKey, got, want)
		}
	}
	t.Logf("cheapest %s launched first; with its price raised by a NodeOverlay the next launch is %s", first, second)
}

// device is the extended resource the overlay adds.
const device corev1.ResourceName = "example.com/device"

// testOverlayExtendedResource: no instance type has example.com/device; a
// NodeOverlay that adds it to the pool's types lets a pod requesting it get
// a node, which runs the pod once the device plugin (played here by the
// test) registers the resource on the node.
func testOverlayExtendedResource(t *testing.T) {
	t.Parallel()
	const pool = "overlay-device"
	ns := namespace(t, "e2e-overlay-device")
	nodePool(t, pool, overlayClass, nil, onDemand, amd64, categoriesCMR)
	nodeOverlay(t, &v1alpha1.NodeOverlay{
		ObjectMeta: metav1.ObjectMeta{Name: "e2e-overlay-device"},
		Spec: v1alpha1.NodeOverlaySpec{
			Requirements: []v1alpha1.NodeSelectorRequirement{{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}},
			Capacity:     corev1.ResourceList{device: resource.MustParse("2")},
		},
	})
	spec := podSpec(pool, requests("500m", "512Mi"))
	spec.Containers[0].Resources.Requests[device] = resource.MustParse("1")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{device: resource.MustParse("1")}
	create(t, deployment(ns, "pause", 1, spec))
	claimName, _ := launchedType(t, pool, 1, nil)
	claim := &v1.NodeClaim{}
	kube := worldOf(t).kube
	eventually(t, "nodeclaim "+claimName+" registered with its node", func() (bool, string) {
		if err := kube.Get(context.Background(), client.ObjectKey{Name: claimName}, claim); err != nil {
			return false, err.Error()
		}
		return claim.Status.NodeName != "", "no node yet"
	})
	if q, ok := claim.Status.Allocatable[device]; !ok || q.Cmp(resource.MustParse("2")) != 0 {
		t.Errorf("nodeclaim %s allocatable %s = %v, want the overlay's 2", claimName, device, claim.Status.Allocatable[device])
	}
	// The device plugin's part: advertise the resource on the node.
	eventually(t, "node "+claim.Status.NodeName+" advertises "+string(device), func() (bool, string) {
		node := &corev1.Node{}
		if err := kube.Get(context.Background(), client.ObjectKey{Name: claim.Status.NodeName}, node); err != nil {
			return false, err.Error()
		}
		if q, ok := node.Status.Allocatable[device]; ok && !q.IsZero() {
			return true, ""
		}
		patch := client.MergeFrom(node.DeepCopy())
		node.Status.Capacity[device] = resource.MustParse("2")
		node.Status.Allocatable[device] = resource.MustParse("2")
		if err := kube.Status().Patch(context.Background(), node, patch); err != nil {
			return false, err.Error()
		}
		return false, "patched"
	})
	waitRunning(t, ns, 1)
	t.Logf("pod requesting %s runs on %s (%s)", device, claim.Status.NodeName, claim.Labels[corev1.LabelInstanceTypeStable])
}

// testOverlayConflict: two overlays of equal weight that set the same
// resource on the same pool conflict; the controller applies the one whose
// name comes later in the alphabet and reports the other not Ready with
// reason Conflict, and a heavier overlay on the same resource does not
// conflict with either.
func testOverlayConflict(t *testing.T) {
	t.Parallel()
	const pool = "overlay-conflict"
	nodePool(t, pool, overlayClass, nil, onDemand, amd64, categoriesCMR)
	spec := func(weight int32, count string) v1alpha1.NodeOverlaySpec {
		return v1alpha1.NodeOverlaySpec{
			Weight:       &weight,
			Requirements: []v1alpha1.NodeSelectorRequirement{{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}},
			Capacity:     corev1.ResourceList{device: resource.MustParse(count)},
		}
	}
	nodeOverlay(t, &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "e2e-conflict-b"}, Spec: spec(5, "1")})
	nodeOverlay(t, &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "e2e-conflict-heavy"}, Spec: spec(6, "3")})
	create(t, &v1alpha1.NodeOverlay{ObjectMeta: metav1.ObjectMeta{Name: "e2e-conflict-a"}, Spec: spec(5, "2")})
	eventually(t, "NodeOverlay e2e-conflict-a reported in conflict", func() (bool, string) {
		got := &v1alpha1.NodeOverlay{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: "e2e-conflict-a"}, got); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTypeValidationSucceeded)
		ready := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady)
		ok := c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonConflict &&
			ready != nil && ready.Status == metav1.ConditionFalse
		return ok, fmt.Sprintf("conditions %v", got.Status.Conditions)
	})
	for _, name := range []string{"e2e-conflict-b", "e2e-conflict-heavy"} {
		got := &v1alpha1.NodeOverlay{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			t.Fatal(err)
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady) {
			t.Errorf("%s is not Ready: %v", name, got.Status.Conditions)
		}
	}
}
