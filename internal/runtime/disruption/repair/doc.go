// Package repair holds node repair's pure rules: matching a Node's
// conditions against the cloud provider's repair policies, resolving when
// a policy applies and with which drain bound, ordering unhealthy nodes,
// and the per-NodePool safety limit that stops repair when too many nodes
// are unhealthy at once (a correlated failure that replacing nodes would
// not fix). The disruption loop's Repair method acts on them.
package repair
