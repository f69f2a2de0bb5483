// Package static keeps each static NodePool (spec.replicas set) at its
// number of nodes, as Karpenter's static provisioning and deprovisioning
// controllers do: it launches claims from the pool's template when there
// are fewer, within limits.nodes, and deletes the cheapest to lose when
// there are more. Pods never add nodes to a static pool and consolidation
// never removes them; drift and expiration replace them.
package static
