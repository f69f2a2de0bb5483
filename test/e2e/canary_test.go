package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// canaryType is the only instance type of the canary scenario's pool; no
// other scenario launches it on demand.
const canaryType = "m5.4xlarge"

// testDriftCanary: a pool rolls drift out as canary=1,bake=30s in waves of
// its 50% budget. A release whose replacements cannot launch replaces at
// most the canary: the canary's failed replacement stops the rollout
// (DriftRolloutStopped), no other node is disrupted, and the pods keep
// running. The next release (a new spec) rolls out again from its canary
// and completes, never more than a wave (2) disrupting at once.
// Serial: it takes the instance type's capacity away.
func testDriftCanary(t *testing.T) {
	const pool = "canary"
	ns := scenarioNamespace(t, "e2e-canary")
	consolidatingPool(t, pool, "Never", func(np *v1.NodePool) {
		np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, canaryType))
		np.Spec.Disruption.Budgets = []v1.Budget{{Nodes: "50%"}}
		np.Annotations = map[string]string{v1.DriftRolloutAnnotationKey: "canary=1,bake=30s"}
	})
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 4, spec))
	waitRunning(t, ns, 4)
	old := claimNames(t, pool)

	var mu sync.Mutex
	worst := 0
	stop := observe(200*time.Millisecond, func() {
		n := disrupting(t, pool)
		mu.Lock()
		worst = max(worst, n)
		mu.Unlock()
	})
	restore := map[string]int{}
	for _, z := range region(t).Zones {
		restore[z.Name] = worldOf(t).sim.EC2.Capacity(canaryType, z.Name, "on-demand")
		if err := worldOf(t).sim.EC2.SetCapacity(canaryType, z.Name, "on-demand", 0); err != nil {
			t.Fatal(err)
		}
	}
	driftPool(t, pool, "bad-release")
	// The canary's command fails as soon as its replacement is gone.
	eventually(t, "a DriftRolloutStopped warning on the pool", func() (bool, string) {
		return len(runtimeEvents(t, "default", pool, "DriftRolloutStopped")) > 0, "no event yet"
	})
	stop()
	if worst > 1 {
		t.Errorf("%d nodes disrupting at once under a bad release; the canary is 1", worst)
	}
	for _, c := range claimsOf(t, pool) {
		if c.DeletionTimestamp != nil {
			t.Errorf("nodeclaim %s is being deleted though no replacement launched", c.Name)
		}
	}
	waitRunning(t, ns, 4)

	for z, n := range restore {
		if err := worldOf(t).sim.EC2.SetCapacity(canaryType, z, "on-demand", n); err != nil {
			t.Fatal(err)
		}
	}
	worst = 0
	stop = observe(200*time.Millisecond, func() {
		n := disrupting(t, pool)
		mu.Lock()
		worst = max(worst, n)
		mu.Unlock()
	})
	driftPool(t, pool, "good-release")
	waitLong(t, "every node replaced by the good release", 4*waitTimeout, func() (bool, string) {
		return replacedAll(t, pool, old), fmt.Sprintf("nodeclaims %v", claimNames(t, pool))
	})
	stop()
	waitRunning(t, ns, 4)
	if worst > 2 {
		t.Errorf("%d nodes disrupting at once; waves are the 50%% budget of 4 nodes, 2", worst)
	}
}
