package cloud

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// NodeClass is what the core controllers read of a node class: its status
// conditions (Ready).
type NodeClass interface {
	client.Object
	GetConditions() []metav1.Condition
}

// NodeClassKind is a node class kind a NodePool's nodeClassRef may name.
type NodeClassKind struct {
	Group, Kind string
	// New returns an empty object of the kind, to watch or read into.
	New func() NodeClass
	// HashAnnotations are the static-drift hash and version annotations the
	// claims launched with a node class of the kind carry; the provider
	// computes them, since they may cover its settings too.
	HashAnnotations func(NodeClass) map[string]string
	// Release names what the node class resolves now that drifts its nodes
	// without a spec change (an AWS node class's AMIs), "" while unresolved;
	// nil when nothing does.
	Release func(NodeClass) string
}

// NodeClassKindOf is the kind of p's node classes that ref names; false
// when p serves no such kind.
func NodeClassKindOf(p Provider, ref *v1.NodeClassReference) (NodeClassKind, bool) {
	if ref == nil {
		return NodeClassKind{}, false
	}
	for _, k := range p.NodeClasses() {
		if k.Group == ref.Group && k.Kind == ref.Kind {
			return k, true
		}
	}
	return NodeClassKind{}, false
}

// DriftReason names why a claim drifted; empty means not drifted.
type DriftReason string

// PoolRequests are reconcile requests for the NodePools whose nodeClassRef
// names the node class of this kind called name: what a change of that
// node class wakes.
func (k NodeClassKind) PoolRequests(ctx context.Context, kube client.Reader, name string) []reconcile.Request {
	pools := &v1.NodePoolList{}
	if err := kube.List(ctx, pools); err != nil {
		return nil
	}
	var out []reconcile.Request
	for _, p := range pools.Items {
		if ref := p.Spec.Template.Spec.NodeClassRef; ref != nil && ref.Kind == k.Kind && ref.Name == name {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: p.Name}})
		}
	}
	return out
}
