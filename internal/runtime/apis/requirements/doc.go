// Package requirements is the label-requirement algebra used by scheduling: a
// Requirement is a (possibly complemented) value set for one label key with
// optional integer bounds, and Requirements is a per-key conjunction of them.
// The semantics follow Karpenter v1 so that NodePool and pod constraints
// combine exactly as they do there.
package requirements
