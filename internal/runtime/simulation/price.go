package simulation

import (
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// FindType is the instance type of that name among types, nil if none.
func FindType(types []*scheduling.InstanceType, name string) *scheduling.InstanceType {
	for _, it := range types {
		if it.Name == name {
			return it
		}
	}
	return nil
}

// OfferingPrice is the price of the type's offering in zone for the capacity
// type, available or not (the node already runs on it).
func OfferingPrice(it *scheduling.InstanceType, zone, capacityType string) (float64, bool) {
	for _, o := range it.Offerings {
		if o.Zone == zone && o.CapacityType == capacityType {
			return o.Price, true
		}
	}
	return 0, false
}

// NodePrice is what a node with these labels costs per hour among its
// pool's instance types: its type's offering in its zone and capacity type;
// false when the type or offering is not listed.
func NodePrice(labels map[string]string, types []*scheduling.InstanceType) (float64, bool) {
	it := FindType(types, labels[corev1.LabelInstanceTypeStable])
	if it == nil {
		return 0, false
	}
	return OfferingPrice(it, labels[corev1.LabelTopologyZone], labels[v1.CapacityTypeLabelKey])
}
