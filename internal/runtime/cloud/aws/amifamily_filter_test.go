package aws_test

import (
	"strings"
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestAL2023LeavesOutA1: as in Karpenter, a node class of the AL2023
// family offers no a1 (first-generation Graviton) type, which AL2023 does
// not support; an AL2 class offers them.
func TestAL2023LeavesOutA1(t *testing.T) {
	ctx := testContext(t)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	a1 := func(alias string) (n, arm int) {
		nc := readyNodeClass(t, prov, testenv.NodeClass("a1-"+strings.Split(alias, "@")[0], cluster, alias))
		its, err := prov.InstanceTypes().List(ctx, nc, zones)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range its {
			if strings.HasPrefix(it.Name, "a1.") {
				n++
			}
			if it.Labels["kubernetes.io/arch"] == "arm64" {
				arm++
			}
		}
		return n, arm
	}
	if n, arm := a1("al2023@latest"); n != 0 || arm == 0 {
		t.Errorf("AL2023 offers %d a1 types (and %d arm64 types); want none of a1, some arm64", n, arm)
	}
	if n, _ := a1("al2@latest"); n == 0 {
		t.Errorf("AL2 offers no a1 type; the catalog cannot tell")
	}
}
