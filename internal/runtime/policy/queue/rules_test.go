package queue

import (
	"encoding/json"
	"slices"
	"testing"
)

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

// Only the queue's own rules may have EventBridge send to it: the delivery
// statement names their ARNs in aws:SourceArn, in the queue's partition,
// region and account, and with the names the rules get from base.
func TestQueuePolicyNamesItsRules(t *testing.T) {
	const queueARN = "arn:aws-cn:sqs:cn-north-1:111122223333:demo"
	var doc struct {
		Statement []struct {
			Sid       string
			Condition struct {
				ArnEquals map[string][]string
			}
		}
	}
	if err := json.Unmarshal([]byte(QueuePolicy(queueARN, "prefix")), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range Rules {
		want = append(want, "arn:aws-cn:events:cn-north-1:111122223333:rule/"+r.RuleName("prefix"))
	}
	for _, st := range doc.Statement {
		if st.Sid != "AllowEventDelivery" {
			continue
		}
		if got := st.Condition.ArnEquals["aws:SourceArn"]; !slices.Equal(got, want) {
			t.Fatalf("AllowEventDelivery's aws:SourceArn = %v, want the queue's rules %v (condition %v)", got, want, st.Condition)
		}
		return
	}
	t.Fatal("no AllowEventDelivery statement")
}
