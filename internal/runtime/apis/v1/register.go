package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// Group is the API group of NodePool and NodeClaim.
const Group = "karpenter.sh"

var (
	// SchemeGroupVersion is karpenter.sh/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: Group, Version: "v1"}

	// SchemeBuilder registers NodePool and NodeClaim with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds karpenter.sh/v1 to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(&NodePool{}, &NodePoolList{}, &NodeClaim{}, &NodeClaimList{})
}
