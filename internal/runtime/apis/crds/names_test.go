package crds_test

import (
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
)

// TestNamesAndColumns checks what kubectl users see: names, short names,
// categories, the status subresource and the printer columns (wide ones at
// priority 1), as Karpenter has them.
func TestNamesAndColumns(t *testing.T) {
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		shortNames []string
		columns    []string
		wide       []string
		version    string
	}{
		"nodepools.karpenter.sh": {nil, []string{"NodeClass", "Nodes", "Ready", "Age"}, []string{"Weight", "CPU", "Memory"}, "v1"},
		"nodeclaims.karpenter.sh": {nil, []string{"Type", "Capacity", "Zone", "Node", "Ready", "Age"},
			[]string{"ImageID", "ID", "NodePool", "NodeClass", "Drifted"}, "v1"},
		"ec2nodeclasses.karpenter.k8s.aws": {[]string{"ec2nc", "ec2ncs"}, []string{"Ready", "Age"}, []string{"Role"}, "v1"},
		"nodeoverlays.karpenter.sh":        {[]string{"overlays"}, []string{"Ready", "Age"}, []string{"Weight"}, "v1alpha1"},
	}
	if len(defs) != len(want) {
		t.Fatalf("got %d CRDs, want %d", len(defs), len(want))
	}
	for _, crd := range defs {
		w, ok := want[crd.Name]
		if !ok {
			t.Errorf("unexpected CRD %s", crd.Name)
			continue
		}
		if crd.Spec.Scope != apiextensionsv1.ClusterScoped {
			t.Errorf("%s: scope %s, want Cluster", crd.Name, crd.Spec.Scope)
		}
		if !slices.Equal(crd.Spec.Names.ShortNames, w.shortNames) {
			t.Errorf("%s: short names %v, want %v", crd.Name, crd.Spec.Names.ShortNames, w.shortNames)
		}
		if !slices.Equal(crd.Spec.Names.Categories, []string{"karpenter"}) {
			t.Errorf("%s: categories %v, want [karpenter]", crd.Name, crd.Spec.Names.Categories)
		}
		if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Name != w.version || !crd.Spec.Versions[0].Storage {
			t.Fatalf("%s: want exactly one served and stored version %s", crd.Name, w.version)
		}
		version := crd.Spec.Versions[0]
		if version.Subresources == nil || version.Subresources.Status == nil {
			t.Errorf("%s: no status subresource", crd.Name)
		}
		var columns, wide []string
		for _, c := range version.AdditionalPrinterColumns {
			if c.Priority == 0 {
				columns = append(columns, c.Name)
			} else {
				wide = append(wide, c.Name)
			}
		}
		if !slices.Equal(columns, w.columns) || !slices.Equal(wide, w.wide) {
			t.Errorf("%s: columns %v wide %v, want %v wide %v", crd.Name, columns, wide, w.columns, w.wide)
		}
	}
}
