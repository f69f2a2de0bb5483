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

// Two queues whose names share the first 40 characters or more (two
// clusters' queues, say ...-payments-blue and ...-payments-green) never get
// the same rule name, however much of the name must be cut.
func TestRuleNamesOfQueuesSharingAPrefixDiffer(t *testing.T) {
	prefix := "platform-prod-eu-west-1-payments-cluster-"
	for _, pair := range [][2]string{
		{prefix + "blue", prefix + "green"},
		{prefix + "blue-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", prefix + "blue-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"},
	} {
		for _, r := range Rules {
			a, b := r.RuleName(pair[0]), r.RuleName(pair[1])
			if a == b || len(a) > 64 || len(b) > 64 {
				t.Errorf("%s: queues %q and %q get rule names %q (%d) and %q (%d)", r.Key, pair[0], pair[1], a, len(a), b, len(b))
			}
		}
	}
	// A name that fits keeps its readable form.
	if got := Rules[0].RuleName("demo"); got != "demo-scheduled-change" {
		t.Errorf("short queue name: rule %q, want demo-scheduled-change", got)
	}
}
