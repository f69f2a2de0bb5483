// Package rollout holds the pure rules of Joist's safe rollouts: the
// disruption circuit breaker's window arithmetic and its record, persisted
// on the NodePool so a restarted controller sees the failures its
// predecessor counted. Plain values in and out: no clients, no clocks.
package rollout
