// Package scheduling is the provisioning solver: it receives instance types,
// NodePools, existing nodes, in-flight NodeClaims, daemonsets and pending
// pods as plain values and returns a Plan placing each pod on an existing
// node, an in-flight claim or a new NodeClaim, or explaining why it cannot
// be placed. It has no clients, clocks or goroutines.
//
// Pods are grouped into equivalence classes (same namespace, labels,
// requests, constraints and owner) and each class is placed in bulk.
// Instance-type compatibility is a bitset over the catalog so intersecting
// requirements costs a few machine words. New claims are sized by choosing
// the instance type with the lowest price per share of the demand still to
// be placed, then filled first-fit-decreasing.
package scheduling
