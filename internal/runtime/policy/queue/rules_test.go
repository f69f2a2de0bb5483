package queue

import "testing"

func TestRuleNamesFitEventBridge(t *testing.T) {
	long := "a-very-long-queue-name-that-goes-on-and-on-and-on-for-a-while-longer"
	seen := map[string]bool{}
	for _, r := range Rules {
		n := r.RuleName(long)
		if len(n) > 64 || seen[n] {
			t.Errorf("rule name %q: length %d, duplicate %v", n, len(n), seen[n])
		}
		seen[n] = true
	}
}
