package aws_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// A reserved instance read back through Get and List (as after a restart)
// is the same NodeClaim the launch returned: its reservation, zone ID,
// architecture, placement and pool labels and its resources.
func TestReservedInstanceReadBackKeepsItsLabels(t *testing.T) {
	ctx := testContext(t)
	const typ = "m5.large"
	zone := sim.EC2.Region().Zones[1].Name
	crID, err := sim.EC2.AddCapacityReservation(typ, zone, 1, "joist-test", "reserved-roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("roundtrip-reserved", cluster, "al2023@latest")
	nc.Spec.CapacityReservationSelectorTerms = []awsv1.CapacityReservationSelectorTerm{{Tags: map[string]string{"joist-test": "reserved-roundtrip"}}}
	nc = readyNodeClass(t, prov, nc)
	launched, _, _ := launchReserved(t, nc, "roundtrip-reserved", typ, zone)
	if launched.Labels[v1.LabelCapacityReservationID] != crID || launched.Labels[v1.LabelTopologyZoneID] == "" {
		t.Fatalf("launched claim labels %v: want reservation %s and a zone ID", launched.Labels, crID)
	}

	got, err := prov.Get(ctx, launched.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	var listed *v1.NodeClaim
	all, err := prov.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if c.Status.ProviderID == launched.Status.ProviderID {
			listed = c
		}
	}
	if listed == nil {
		t.Fatalf("List has no claim for %s", launched.Status.ProviderID)
	}
	for name, c := range map[string]*v1.NodeClaim{"Get": got, "List": listed} {
		for _, key := range []string{
			v1.LabelCapacityReservationID, v1.LabelCapacityReservationType, v1.LabelCapacityReservationInterruptible,
			v1.LabelTopologyZoneID, corev1.LabelTopologyZone, corev1.LabelArchStable, corev1.LabelInstanceTypeStable,
			v1.CapacityTypeLabelKey, v1.NodePoolLabelKey, v1.LabelNodeClass,
		} {
			if c.Labels[key] != launched.Labels[key] {
				t.Errorf("%s: label %s = %q, launch said %q", name, key, c.Labels[key], launched.Labels[key])
			}
		}
		if c.Name != launched.Name || c.Status.ImageID != launched.Status.ImageID {
			t.Errorf("%s: name %q image %q, launch said %q %q", name, c.Name, c.Status.ImageID, launched.Name, launched.Status.ImageID)
		}
		if !c.Status.Allocatable.Cpu().Equal(*launched.Status.Allocatable.Cpu()) || !c.Status.Allocatable.Memory().Equal(*launched.Status.Allocatable.Memory()) {
			t.Errorf("%s: allocatable %v, launch said %v", name, c.Status.Allocatable, launched.Status.Allocatable)
		}
	}
}
