package provider

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	"github.com/joistdev/terraform-provider-joist/internal/provider/validate"
)

// apiValidator is the CRD validator, read once from the embedded CRDs.
var apiValidator = sync.OnceValues(validate.New)

// kind is an API kind managed as a Terraform resource: its Terraform
// attributes are derived from the CRD's spec and status schemas.
type kind struct {
	gvk      schema.GroupVersionKind
	resource string
	spec     []*crdschema.Node
	status   []*crdschema.Node
}

func newKind(gvk schema.GroupVersionKind, resource string) *kind {
	v, err := apiValidator()
	if err != nil {
		panic(fmt.Sprintf("embedded CRDs: %v", err))
	}
	s := v.SchemaOf(gvk.Group, gvk.Version, gvk.Kind)
	if s == nil {
		panic(fmt.Sprintf("no embedded CRD for %s", gvk))
	}
	k := &kind{gvk: gvk, resource: resource}
	for _, n := range crdschema.Children(s) {
		switch n.Field {
		case "spec":
			k.spec = n.Children
		case "status":
			k.status = n.Children
		}
	}
	return k
}

func (k *kind) gvr() schema.GroupVersionResource {
	return k.gvk.GroupVersion().WithResource(k.resource)
}

var (
	nodePoolKind     = sync.OnceValue(func() *kind { return newKind(nodePoolGVK, "nodepools") })
	ec2NodeClassKind = sync.OnceValue(func() *kind { return newKind(ec2NodeClassGVK, "ec2nodeclasses") })
	nodeOverlayKind  = sync.OnceValue(func() *kind { return newKind(nodeOverlayGVK, "nodeoverlays") })

	nodePoolGVK     = schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1", Kind: "NodePool"}
	nodeClaimGVR    = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	configMapGVR    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	ec2NodeClassGVK = schema.GroupVersionKind{Group: "karpenter.k8s.aws", Version: "v1", Kind: "EC2NodeClass"}
	nodeOverlayGVK  = schema.GroupVersionKind{Group: "karpenter.sh", Version: "v1alpha1", Kind: "NodeOverlay"}
)
