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

// TestAdmissionOfTenancy checks that a tenancy requirement admits a type
// by its label choices: every type takes default and dedicated tenancy.
func TestAdmissionOfTenancy(t *testing.T) {
	it := &scheduling.InstanceType{Name: "m5.large", Labels: map[string]string{corev1.LabelArchStable: "amd64"}, LabelChoices: labelChoices(nil)}
	for _, tc := range []struct {
		op     corev1.NodeSelectorOperator
		values []string
		want   bool
	}{
		{corev1.NodeSelectorOpIn, []string{"dedicated"}, true},
		{corev1.NodeSelectorOpNotIn, []string{"default"}, true},
		{corev1.NodeSelectorOpIn, []string{"host"}, false},
		{corev1.NodeSelectorOpDoesNotExist, nil, false},
	} {
		admit := Admit(requirements.NewRequirements(requirements.New(v1.LabelInstanceTenancy, tc.op, tc.values...)))
		if got := admit.Type(it); got != tc.want {
			t.Errorf("tenancy %s %v: admitted %v, want %v", tc.op, tc.values, got, tc.want)
		}
	}
}
