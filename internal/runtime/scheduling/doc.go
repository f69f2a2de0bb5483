// Package scheduling is the provisioning solver: it receives instance types,
// NodePools, existing nodes, in-flight NodeClaims, daemonsets and pending
// pods as plain values and returns a Plan placing each pod on an existing
// node, an in-flight claim or a new NodeClaim, or explaining why it cannot
// be placed. It has no clients, clocks or goroutines; Solve is a pure
// function of its Input.
//
// # Algorithm
//
// Pods are grouped into equivalence classes (same namespace, labels,
// requests, scheduling constraints, volume topology and owner) and classes
// are queued first-fit-decreasing (CPU, then memory). Each class is placed in
// bulk: bins are scanned in order — existing nodes (initialized first), then
// in-flight claims, then claims opened in this pass — with a cursor, since a
// bin that cannot take more pods of a class never can later. What is left
// opens new claims in the first NodePool (weight order) that can host it.
// The scan skips bins without room through a segment tree of per-resource
// room maxima (room.go; one more per zone for zone-pinned classes), so its
// cost follows the bins that can take a pod, not all bins.
// Classes whose zone-like topology decides a domain per pod (spread on a
// non-hostname key, zonal self anti-affinity) are placed pod by pod against
// per-domain cursors. A class that cannot be fully placed is relaxed one
// preference at a time, in Karpenter's order, and re-queued; the loop ends
// when a full cycle makes no progress.
//
// Instance-type compatibility is a bitset over the catalog: a requirement
// set compiles once into the types whose labels satisfy it and that have an
// available offering in an allowed zone and capacity type, so intersecting
// requirements costs a few machine words. Requirement sets are interned and
// their pairwise combinations cached.
//
// Before the queue runs, classes that only resources and node requirements
// constrain are packed together (patterns.go): after existing capacity, a
// column-generation LP over node patterns (an instance type and how many
// pods of each class it holds) decides which shapes to buy, so memory-heavy
// and CPU-heavy pods share nodes that suit both. The LP's whole nodes become
// claims; its fractional rest goes through the queue like every other class.
//
// Every sizing decision, the LP's and chooseTarget's, charges a node the
// same price (cost.go): its cheapest offering plus Options.NodeCost
// (NODE_COST, DefaultNodeCost $0.002/h), what a node costs beyond its price;
// daemonset requests are already out of its room. So between shapes within
// a few percent per pod the larger wins: fewer nodes to launch, register and
// fragment. Where a pool's limits could bind, a node pays only its price, as
// a larger node's idle capacity would count against the limits. Pods with
// topology are sized by price alone.
//
// A new claim is sized for one instance type (see chooseTarget): the type
// whose simulated fill with the pending pods is worth the most per dollar.
// The simulation walks the queue in runs of classes with equal requests and
// skips a run that no longer fits with one check. When one node could hold
// every pending pod, the batch's end is played out claim by claim as
// above, and the cheapest type holding them all wins if it costs no more
// (finishInOne): five pods go on one node of five rather than a node of
// three and one of two at the same price.
// A disrupted node's pods (Options.Replacing: drift and repair) take that
// type whatever the split costs: kube-scheduler rebinds them as the node
// drains, not as a split was planned. The cheapest type holding them all
// costs no more than the node's own type while the pool still offers it.
// Pods are admitted while they fit that type; a claim outgrows it only when
// its NodePool cannot open another node or pods must share the node
// (hostname affinity). Pods that are the first to match their own hostname
// affinity term (Karpenter's self-selecting bootstrap) take only a node or
// claim with room for every pending pod that must then join them, or open a
// claim sized for all of them; those pods are placed right after them. The
// final claim lists every compatible type that
// holds its pods, cheapest first, truncated to Options.MaxInstanceTypes
// while keeping minValues.
//
// # Semantics worth knowing
//
//   - Topology counts only pods whose domain is decided (an existing node,
//     or a claim whose requirements allow exactly one value); a claim whose
//     zone narrows later is counted then. Anti-affinity counts undecided pods
//     in every possible domain.
//   - Plans hold in any binding order: a pod placed into a domain where a
//     DoNotSchedule spread selecting it is already placed may not push that
//     spread past maxSkew (inversespread.go), as kube-scheduler would refuse
//     the spread's pod were it bound last. A class that no domain admits
//     under this rule is finally placed without it.
//   - Hostname spread assumes a fresh node can always be added, so the
//     global minimum is 0 and each node takes at most maxSkew matching pods.
//   - NodePool limits reserve the sized type's capacity per claim; options
//     larger on a limited resource are dropped from that claim.
//   - Not modelled: reserved-capacity strictness, DRA, CSI attach limits.
//
// Package oracle is an independent checker of a Plan against its Input, used
// by the tests and benchmarks.
package scheduling
