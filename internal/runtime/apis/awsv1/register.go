package awsv1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

var (
	// SchemeGroupVersion is karpenter.k8s.aws/v1.
	SchemeGroupVersion = schema.GroupVersion{Group: v1.AWSGroup, Version: "v1"}

	// SchemeBuilder registers EC2NodeClass with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: SchemeGroupVersion}

	// AddToScheme adds karpenter.k8s.aws/v1 to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// EC2NodeClassKind is the kind a NodePool's nodeClassRef names.
const EC2NodeClassKind = "EC2NodeClass"

func init() {
	SchemeBuilder.Register(&EC2NodeClass{}, &EC2NodeClassList{})
}
