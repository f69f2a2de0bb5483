// Package disruption is the voluntary disruption controller: a singleton
// loop that, every pass, tries Karpenter's graceful methods in v1.6+ order
// (Emptiness, Drift, multi-node consolidation, single-node consolidation)
// over the disruptable candidates within each NodePool's budget, and hands
// the first resulting command to the orchestration queue, which taints the
// candidates, launches and awaits their replacements and only then deletes
// them (termination drains them). Decisions are pure functions of an Env
// (a cluster snapshot with prices and PDBs); the scheduling solver
// simulates where the candidates' pods would go.
package disruption
