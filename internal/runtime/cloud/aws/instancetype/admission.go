package instancetype

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// definedKeys are the labels every instance type defines (absent means the
// type does not have the property, e.g. no GPU): requirements on them are
// checked; requirements on other keys (NodePool and user labels) are not
// the cloud provider's to satisfy.
var definedKeys = requirements.NewKeySet(
	corev1.LabelInstanceTypeStable, corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelTopologyRegion,
	corev1.LabelTopologyZone, v1.CapacityTypeLabelKey, v1.LabelTopologyZoneID, v1.LabelNodeClass,
	v1.LabelInstanceCategory, v1.LabelInstanceFamily, v1.LabelInstanceGeneration, v1.LabelInstanceSize,
	v1.LabelInstanceCPU, v1.LabelInstanceCPUManufacturer, v1.LabelInstanceCPUSustainedClockSpeedMhz,
	v1.LabelInstanceMemory, v1.LabelInstanceEBSBandwidth, v1.LabelInstanceNetworkBandwidth,
	v1.LabelInstanceGPUName, v1.LabelInstanceGPUManufacturer, v1.LabelInstanceGPUCount, v1.LabelInstanceGPUMemory,
	v1.LabelInstanceAcceleratorName, v1.LabelInstanceAcceleratorManufacturer, v1.LabelInstanceAcceleratorCount,
	v1.LabelInstanceLocalNVME, v1.LabelInstanceHypervisor, v1.LabelInstanceEncryptionInTransitSupported,
	v1.LabelInstanceCapabilityFlex, v1.LabelInstanceTenancy,
)

// offeringKeys are the labels that vary per offering rather than per type.
var offeringKeys = requirements.NewKeySet(append([]string{corev1.LabelTopologyZone, v1.CapacityTypeLabelKey, v1.LabelTopologyZoneID},
	scheduling.ReservationKeys...)...)

// Admission is what a set of requirements asks of the cloud: of an instance
// type's labels, and of an offering's (zone, capacity type, zone ID). The
// launch and the joist_instance_types data source admit types and
// offerings by it.
type Admission struct {
	types, offerings requirements.Requirements
}

// Admit splits reqs into what types and offerings must meet.
func Admit(reqs requirements.Requirements) Admission {
	a := Admission{types: requirements.Requirements{}, offerings: requirements.Requirements{}}
	for key, r := range reqs {
		switch {
		case offeringKeys.Has(key):
			a.offerings[key] = r
		case definedKeys.Has(key):
			a.types[key] = r
		}
	}
	return a
}

// Type reports whether the type's labels meet the requirements; a label
// with choices (tenancy) meets one when any of its choices does.
func (a Admission) Type(it *scheduling.InstanceType) bool {
	for key, r := range a.types {
		if choices, ok := it.LabelChoices[key]; ok {
			if !slices.ContainsFunc(choices, r.Has) {
				return false
			}
		} else if !requirements.NewRequirements(r).MatchesLabels(it.Labels) {
			return false
		}
	}
	return true
}

// Offering reports whether the offering meets the requirements; zoneID is
// its zone's ID, "" when unknown. Only a reserved offering has a
// reservation's ID, type and interruptibility.
func (a Admission) Offering(o scheduling.Offering, zoneID string) bool {
	labels := o.ReservationLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[corev1.LabelTopologyZone], labels[v1.CapacityTypeLabelKey] = o.Zone, o.CapacityType
	if zoneID != "" {
		labels[v1.LabelTopologyZoneID] = zoneID
	}
	return a.offerings.MatchesLabels(labels)
}
