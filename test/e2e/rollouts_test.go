package e2e

import "testing"

// TestRollouts: Joist's disruption controls (observe-only drift, the pauses,
// the circuit breaker, canary rollouts) in a world of their own, beside
// TestShared. Its scenarios run one after another: the cluster pause holds
// every pool of the world, and the breaker and canary scenarios take their
// instance types' capacity away (and their failures count toward the
// cluster breaker).
func TestRollouts(t *testing.T) {
	t.Parallel()
	ownWorld(t, worldOptions{name: "rollouts"})
	nodeClass(t, "default")
	t.Run("controls", testDisruptionControls)
	t.Run("breaker", testDisruptionBreaker)
	t.Run("canary", testDriftCanary)
}
