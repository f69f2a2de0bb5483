package aws

import (
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// MaxInstanceTypes bounds the instance types offered to one fleet.
const MaxInstanceTypes = 60

// candidate is an instance type with the offerings a claim may launch.
type candidate struct {
	it        *scheduling.InstanceType
	offerings []scheduling.Offering
}

// price is the cheapest offering of a capacity type, +Inf if none.
func (c candidate) price(capacityType string) float64 {
	p := math.Inf(1)
	for _, o := range c.offerings {
		if o.CapacityType == capacityType && o.Price < p {
			p = o.Price
		}
	}
	return p
}

func (c candidate) has(capacityType string) bool { return !math.IsInf(c.price(capacityType), 1) }

// compatible keeps the types whose labels meet the requirements and whose
// allocatable fits the requests, each with its available offerings that
// meet the zone, capacity-type and reservation requirements and have a
// subnet; a reservation with no instance left offers nothing.
func compatible(its []*scheduling.InstanceType, reqs requirements.Requirements, requests corev1.ResourceList, zoneIDs map[string]string) []candidate {
	admit := instancetype.Admit(reqs)
	var out []candidate
	for _, it := range its {
		if !admit.Type(it) || !fits(requests, it.Allocatable) {
			continue
		}
		c := candidate{it: it}
		for _, o := range it.Offerings {
			zoneID, ok := zoneIDs[o.Zone]
			full := o.CapacityType == v1.CapacityTypeReserved && o.ReservationCapacity <= 0
			if o.Available && !full && ok && admit.Offering(o, zoneID) {
				c.offerings = append(c.offerings, o)
			}
		}
		if len(c.offerings) > 0 {
			out = append(out, c)
		}
	}
	return out
}

func fits(requests, allocatable corev1.ResourceList) bool {
	for name, q := range requests {
		a, ok := allocatable[name]
		if !ok {
			if q.IsZero() {
				continue
			}
			return false
		}
		if q.Cmp(a) > 0 {
			return false
		}
	}
	return true
}

// isExotic types carry GPUs or accelerators or are bare metal: only worth
// launching when asked for.
func isExotic(it *scheduling.InstanceType) bool {
	_, gpu := it.Labels[v1.LabelInstanceGPUCount]
	_, acc := it.Labels[v1.LabelInstanceAcceleratorCount]
	return gpu || acc || strings.Contains(it.Labels[v1.LabelInstanceSize], "metal")
}

// withoutExotic drops exotic types when generic ones remain, unless the
// claim asks for accelerators or sizes explicitly or uses minValues (which
// needs the full set for flexibility).
func withoutExotic(cands []candidate, reqs requirements.Requirements) []candidate {
	for key, r := range reqs {
		if r.MinValues != nil {
			return cands
		}
		switch key {
		case v1.LabelInstanceGPUCount, v1.LabelInstanceGPUName, v1.LabelInstanceGPUManufacturer, v1.LabelInstanceGPUMemory,
			v1.LabelInstanceAcceleratorCount, v1.LabelInstanceAcceleratorName, v1.LabelInstanceAcceleratorManufacturer,
			v1.LabelInstanceSize:
			return cands
		}
	}
	var generic []candidate
	for _, c := range cands {
		if !isExotic(c.it) {
			generic = append(generic, c)
		}
	}
	if len(generic) == 0 {
		return cands
	}
	return generic
}

// withoutDearSpot drops spot offerings that cost more than the cheapest
// on-demand offering: launching them would never save money.
func withoutDearSpot(cands []candidate) []candidate {
	cheapestOD := math.Inf(1)
	for _, c := range cands {
		cheapestOD = min(cheapestOD, c.price(v1.CapacityTypeOnDemand))
	}
	if math.IsInf(cheapestOD, 1) {
		return cands
	}
	out := make([]candidate, 0, len(cands))
	for _, c := range cands {
		kept := c.offerings[:0:0]
		for _, o := range c.offerings {
			if o.CapacityType != v1.CapacityTypeSpot || o.Price <= cheapestOD {
				kept = append(kept, o)
			}
		}
		if len(kept) > 0 {
			out = append(out, candidate{it: c.it, offerings: kept})
		}
	}
	return out
}

// capacityType picks reserved, then spot, then on-demand: the first one
// that some candidate offers (the claim's requirements already filtered
// offerings by capacity type).
func capacityType(cands []candidate) string {
	for _, ct := range []string{v1.CapacityTypeReserved, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} {
		for _, c := range cands {
			if c.has(ct) {
				return ct
			}
		}
	}
	return ""
}

// cheapest keeps the candidates offering the capacity type, only those
// offerings, cheapest first, truncated to max types but extended (in price
// order) until every minValues requirement has enough distinct values.
func cheapest(cands []candidate, ct string, reqs requirements.Requirements, max int) []candidate {
	out := keepOfferings(cands, func(o scheduling.Offering) bool { return o.CapacityType == ct })
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := out[i].price(ct), out[j].price(ct)
		if pi != pj {
			return pi < pj
		}
		return out[i].it.Name < out[j].it.Name
	})
	if len(out) <= max {
		return out
	}
	n := max
	for n < len(out) && !meetsMinValues(out[:n], reqs) {
		n++
	}
	return out[:n]
}

// keepOfferings keeps the candidates' offerings that pass keep, and the
// candidates left with any.
func keepOfferings(cands []candidate, keep func(scheduling.Offering) bool) []candidate {
	var out []candidate
	for _, c := range cands {
		var offs []scheduling.Offering
		for _, o := range c.offerings {
			if keep(o) {
				offs = append(offs, o)
			}
		}
		if len(offs) > 0 {
			out = append(out, candidate{it: c.it, offerings: offs})
		}
	}
	return out
}

// meetsMinValues reports whether the types offer enough distinct values
// of every key with minValues.
func meetsMinValues(cands []candidate, reqs requirements.Requirements) bool {
	for key, r := range reqs {
		if r.MinValues == nil {
			continue
		}
		values := map[string]bool{}
		for _, c := range cands {
			for _, v := range c.it.Values(key) {
				if r.Has(v) {
					values[v] = true
				}
			}
		}
		if len(values) < *r.MinValues {
			return false
		}
	}
	return true
}

// oneReservation narrows reserved candidates to a single reservation, the
// cheapest offering (most room on a tie): a launch targets one
// reservation, so the launched instance's reservation is known.
func oneReservation(cands []candidate) (candidate, scheduling.Offering, bool) {
	var best candidate
	var off scheduling.Offering
	found := false
	for _, c := range cands {
		for _, o := range c.offerings {
			if o.CapacityType != v1.CapacityTypeReserved || o.ReservationID == "" {
				continue
			}
			if !found || o.Price < off.Price || (o.Price == off.Price && o.ReservationCapacity > off.ReservationCapacity) {
				best, off, found = c, o, true
			}
		}
	}
	if !found {
		return candidate{}, scheduling.Offering{}, false
	}
	return candidate{it: best.it, offerings: []scheduling.Offering{off}}, off, true
}
