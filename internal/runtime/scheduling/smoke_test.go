package scheduling

import "testing"

func TestSmoke(t *testing.T) {
	its := catalogFixture(t)
	in := Input{NodePools: []*NodePool{mkPool("default", its, expr(labelCapacityType, "In", "on-demand"))}, Pods: pods(50, "web", "500m", "1Gi")}
	plan, err := Solve(in)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claims=%d placements=%d errors=%d cost=%.3f", len(plan.NewClaims), len(plan.Placements), len(plan.Errors), plan.Cost())
	for _, c := range plan.NewClaims {
		t.Logf("%s pods=%d types=%d cheapest=%s %.3f", c.NodePool, len(c.Pods), len(c.InstanceTypes), c.InstanceTypes[0].Type.Name, c.Price())
	}
	for _, e := range plan.Errors {
		t.Log(e.Err)
	}
}
