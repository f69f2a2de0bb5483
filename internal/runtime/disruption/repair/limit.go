package repair

import (
	corev1 "k8s.io/api/core/v1"
)

// UnhealthyThresholdPercent is the share of a NodePool's nodes that may be
// unhealthy at once before repair stops for that pool: more than that
// points at a cause (a bad AMI, a zone or network outage) that replacing
// nodes would not fix, and would only churn the pool.
const UnhealthyThresholdPercent = 20

// PoolCount is how many nodes a NodePool has and how many are unhealthy.
type PoolCount struct{ Total, Unhealthy int }

// Tripped says whether the pool is over the safety limit: more unhealthy
// nodes than UnhealthyThresholdPercent of its nodes, rounded up, so one unhealthy
// node never stops repair in a small pool.
func (c PoolCount) Tripped() bool {
	return c.Unhealthy > (c.Total*UnhealthyThresholdPercent+99)/100
}

// CountPools counts, per value of the poolLabel label, the Nodes and those
// with a condition some policy covers, toleration aside (a node turning
// unhealthy counts at once). Nodes without the label are not counted.
func (m *Matcher) CountPools(nodes []*corev1.Node, poolLabel string) map[string]PoolCount {
	out := map[string]PoolCount{}
	for _, n := range nodes {
		pool := n.Labels[poolLabel]
		if pool == "" {
			continue
		}
		c := out[pool]
		c.Total++
		if m.Unhealthy(n) {
			c.Unhealthy++
		}
		out[pool] = c
	}
	return out
}
