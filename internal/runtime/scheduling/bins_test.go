package scheduling_test

import (
	"testing"

	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// TestNodeRequestsPlanAsItsPods: a node given its pods' summed requests
// (Node.Requests) is as full as one whose pods Solve sums itself.
func TestNodeRequestsPlanAsItsPods(t *testing.T) {
	it := mkType("m.large", "amd64", 4, 16, 0.20)
	in := func(summed bool) Input {
		n := mkNode("n1", 4, 16, map[string]string{labelZone: "z1"}, pods(3, "running", "1", "1Gi")...)
		if summed {
			n.Requests = SumRequests(n.Pods)
		}
		return Input{NodePools: []*NodePool{mkPool("default", []*InstanceType{it})}, Nodes: []*Node{n}, Pods: pods(2, "new", "1", "1Gi")}
	}
	own, err := Solve(in(false))
	if err != nil {
		t.Fatal(err)
	}
	given, err := Solve(in(true))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := planSummary(own), planSummary(given); a != b {
		t.Fatalf("with the requests given:\n%s\nsummed by Solve:\n%s", b, a)
	}
	if len(own.NewClaims) != 1 {
		t.Errorf("%d new claims, want 1: the node has room for one of the two pods", len(own.NewClaims))
	}
}
