// Package rollout holds the pure rules of Joist's safe rollouts: the drift
// rollout's state machine (a canary, a bake, then waves of the budget's
// size, stopped by a failure, restarted by a new spec) and the disruption
// circuit breaker's window arithmetic. Both records are persisted on the
// NodePool so a restarted controller resumes where its predecessor was.
// Plain values in and out: no clients, no clocks.
package rollout
