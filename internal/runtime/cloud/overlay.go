package cloud

import "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"

// InstanceTypeOverlay changes the instance types listed for a NodePool
// (NodeOverlay prices and extended resources). A provider applies it
// wherever it lists a pool's instance types, so every controller and the
// launch see the same values. Apply never modifies its input; it fails for a
// pool it cannot answer for yet.
type InstanceTypeOverlay interface {
	Apply(pool string, its []*scheduling.InstanceType) ([]*scheduling.InstanceType, error)
}
