package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// breakerType is the only instance type of the breaker scenario's pool;
// no other scenario launches it on demand.
const breakerType = "m5.2xlarge"

// testDisruptionBreaker: drift whose replacements cannot launch (no
// on-demand capacity left for the pool's one instance type) fails twice,
// which opens the pool's breaker (joist.dev/disruption-breaker = 2/1h):
// DisruptionHalted on the pool with a Warning event, no drifted node gone,
// the pods running. Capacity back and the breaker reset, drift completes.
// Serial: it takes the instance type's capacity away.
func testDisruptionBreaker(t *testing.T) {
	const pool = "breaker"
	ns := scenarioNamespace(t, "e2e-breaker")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, breakerType))
		np.Annotations = map[string]string{v1.DisruptionBreakerAnnotationKey: "2/1h"}
	})
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)
	old := claimNames(t, pool)

	restore := map[string]int{}
	for _, z := range region(t).Zones {
		restore[z.Name] = worldOf(t).sim.EC2.Capacity(breakerType, z.Name, "on-demand")
		if err := worldOf(t).sim.EC2.SetCapacity(breakerType, z.Name, "on-demand", 0); err != nil {
			t.Fatal(err)
		}
	}
	driftPool(t, pool, "breaker")
	eventually(t, "DisruptionHalted on the pool", func() (bool, string) {
		c := poolCondition(t, pool, v1.ConditionTypeDisruptionHalted)
		return c != nil && c.Status == metav1.ConditionTrue && c.Reason == v1.DisruptionHaltedReasonNodePool, fmt.Sprintf("%+v", c)
	})
	eventually(t, "a DisruptionHalted warning on the pool", func() (bool, string) {
		for _, e := range runtimeEvents(t, "default", pool, "DisruptionHalted") {
			if e.Type == corev1.EventTypeWarning {
				return true, ""
			}
		}
		return false, "no event yet"
	})
	for _, c := range claimsOf(t, pool) {
		if c.DeletionTimestamp != nil {
			t.Errorf("nodeclaim %s is being deleted while its replacements fail", c.Name)
		}
	}
	if got := claimNames(t, pool); strings.Join(got, ",") != strings.Join(old, ",") {
		t.Errorf("nodeclaims went from %v to %v while replacements failed", old, got)
	}
	waitRunning(t, ns, 2)

	for z, n := range restore {
		if err := worldOf(t).sim.EC2.SetCapacity(breakerType, z, "on-demand", n); err != nil {
			t.Fatal(err)
		}
	}
	annotatePool(t, pool, v1.DisruptionBreakerResetAnnotationKey, true, "capacity-back")
	eventually(t, "DisruptionHalted False after the reset", func() (bool, string) {
		c := poolCondition(t, pool, v1.ConditionTypeDisruptionHalted)
		return c != nil && c.Status == metav1.ConditionFalse, fmt.Sprintf("%+v", c)
	})
	// Drift resumes once the failed launches' unavailable offerings
	// expire (3 minutes) and the replacements launch: this wait is three of
	// the usual.
	deadline := time.Now().Add(3 * waitTimeout)
	for !replacedAll(t, pool, old) {
		if time.Now().After(deadline) {
			t.Fatalf("drifted nodeclaims not replaced after the reset within %s: %v", 3*waitTimeout, claimNames(t, pool))
		}
		time.Sleep(time.Second)
	}
	waitRunning(t, ns, 2)
}

// replacedAll reports whether none of old is left and the pool's claims
// are all initialized and not drifted (a replacement may have been sized
// for more than one node's pods, so their count may differ).
func replacedAll(t *testing.T, pool string, old []string) bool {
	claims := claimsOf(t, pool)
	for _, c := range claims {
		for _, o := range old {
			if c.Name == o {
				return false
			}
		}
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInitialized) || meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDrifted) {
			return false
		}
	}
	return len(claims) > 0
}
