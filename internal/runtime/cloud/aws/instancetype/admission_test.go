package instancetype

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func TestAdmission(t *testing.T) {
	admit := Admit(requirements.NewRequirements(
		requirements.New(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"),
		requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot),
		requirements.New(v1.LabelInstanceGPUCount, corev1.NodeSelectorOpDoesNotExist),
		// A NodePool's own label is not the cloud's to meet.
		requirements.New("example.com/team", corev1.NodeSelectorOpIn, "a"),
	))
	arm := &scheduling.InstanceType{Name: "m7g.large", Labels: map[string]string{corev1.LabelArchStable: "arm64"}}
	gpu := &scheduling.InstanceType{Name: "g5g.xlarge", Labels: map[string]string{corev1.LabelArchStable: "arm64", v1.LabelInstanceGPUCount: "1"}}
	amd := &scheduling.InstanceType{Name: "m7i.large", Labels: map[string]string{corev1.LabelArchStable: "amd64"}}
	if !admit.Type(arm) || admit.Type(gpu) || admit.Type(amd) {
		t.Errorf("types admitted: arm %v, gpu %v, amd %v; want arm only", admit.Type(arm), admit.Type(gpu), admit.Type(amd))
	}
	spot := scheduling.Offering{Zone: "us-west-2a", CapacityType: v1.CapacityTypeSpot}
	onDemand := scheduling.Offering{Zone: "us-west-2a", CapacityType: v1.CapacityTypeOnDemand}
	if !admit.Offering(spot, "") || admit.Offering(onDemand, "") {
		t.Errorf("offerings admitted: spot %v, on-demand %v; want spot only", admit.Offering(spot, ""), admit.Offering(onDemand, ""))
	}
}
