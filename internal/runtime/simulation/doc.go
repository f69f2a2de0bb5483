// Package simulation builds the solver's input from a snapshot of the
// cluster: pods with their volume topology, nodes and in-flight claims,
// DaemonSets, and the schedulable NodePools with their instance types and
// the usage counted against their limits. Provisioning builds its pass with
// it, and disruption its what-if runs. It also holds the rules those
// controllers and the static NodePool controller share: the NodeClaim made
// from a solver's claim (NewNodeClaim), a static pool's claim and how many
// it may launch (StaticClaim, StaticToLaunch), and what disrupting a node
// costs (DisruptionCost).
package simulation
