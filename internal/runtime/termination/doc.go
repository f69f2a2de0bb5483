// Package termination finishes Nodes and NodeClaims that are being deleted,
// behind the karpenter.sh/termination finalizer on both: deleting either one
// deletes the other; the Node is tainted karpenter.sh/disrupted:NoSchedule
// and excluded from external load balancers, drained tier by tier through
// the Eviction API (PDBs respected), its volumes are let detach, and its
// instance is terminated and awaited before the finalizers are released.
// A NodeClaim's terminationGracePeriod bounds the whole drain: pods are
// deleted early enough to get their own grace period before the deadline,
// regardless of PDBs and karpenter.sh/do-not-disrupt.
package termination
