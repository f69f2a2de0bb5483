package impact

import (
	"fmt"
	"testing"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// BenchmarkPredict predicts a change that drifts every node (spot narrowed
// to on-demand) of a pool of n f1.8x nodes with 10 pods each, plus a second
// pool the pods could move to.
func BenchmarkPredict(b *testing.B) {
	for _, n := range []int{100, 1000, 5000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			w := &world{}
			pool := mkPool("general")
			w.pool(pool)
			w.pool(mkPool("other", families("f0")))
			for i := range n {
				name := fmt.Sprintf("n%d", i)
				w.node(name, pool, 1, 8, v1.CapacityTypeSpot)
				for j := range 10 {
					w.pod(fmt.Sprintf("app%d", (i*10+j)%50), name, "500m")
				}
			}
			planned := mkPool("general", capacityTypes(v1.CapacityTypeOnDemand))
			b.ResetTimer()
			for b.Loop() {
				res := w.predict(planned)
				if res.Replaced != n {
					b.Fatalf("replaced %d of %d", res.Replaced, n)
				}
			}
		})
	}
}
