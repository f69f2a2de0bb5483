package overlays

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Pool is a NodePool as overlays see it: its name, its template's labels
// (overlays may select on them) and its instance types as the cloud lists
// them, before any overlay.
type Pool struct {
	Name          string
	Labels        map[string]string
	InstanceTypes []*scheduling.InstanceType
}

// offeringKey identifies an offering of an instance type.
type offeringKey struct{ zone, capacityType, reservationID string }

func keyOf(o scheduling.Offering) offeringKey {
	return offeringKey{o.Zone, o.CapacityType, o.ReservationID}
}

// priceChange is the price or priceAdjustment applied to one offering, with
// the lowest weight of the price overlays that matched it so far (the
// conflict rule compares with it).
type priceChange struct {
	change       string
	lowestWeight int32
}

// typeChange is what overlays change about one instance type of one pool.
type typeChange struct {
	prices map[offeringKey]*priceChange
	// capacity is the merged extended resources, higher weights first.
	capacity corev1.ResourceList
	// lowestCapacity and lowestCapacityWeight are the resources and weight
	// of the last capacity overlay merged (the conflict rule compares with
	// them).
	lowestCapacity       corev1.ResourceList
	lowestCapacityWeight int32
}

// Table is the result of evaluating the overlays against the pools: the
// changes per pool and instance type, and which pools were evaluated.
// It is immutable once built.
type Table struct {
	changes   map[string]map[string]*typeChange
	evaluated map[string]bool
}

// Evaluate applies valid overlays to the pools in Karpenter's order
// (v1alpha1.OrderByWeight) and returns the table with the names of the
// overlays that conflict and so are not applied. An overlay conflicts when
// it changes the price of an offering, or a resource of an instance type,
// that an overlay of the same weight applied earlier in that order changes
// too; a conflicting overlay is applied nowhere, so no pool sees half of it.
// Overlays that fail Validate must be left out by the caller.
func Evaluate(overlays []v1alpha1.NodeOverlay, pools []Pool) (*Table, map[string]bool, error) {
	t := &Table{changes: map[string]map[string]*typeChange{}, evaluated: map[string]bool{}}
	for _, p := range pools {
		t.evaluated[p.Name] = true
	}
	ordered := make([]v1alpha1.NodeOverlay, len(overlays))
	copy(ordered, overlays)
	v1alpha1.OrderByWeight(ordered)
	conflicts := map[string]bool{}
	for i := range ordered {
		o := &ordered[i]
		reqs, err := o.Requirements()
		if err != nil {
			return nil, nil, fmt.Errorf("NodeOverlay %s: %w", o.Name, err)
		}
		var hits []hit
		for _, p := range pools {
			for _, it := range p.InstanceTypes {
				if offs := matchingOfferings(p, it, reqs); len(offs) > 0 {
					hits = append(hits, hit{pool: p.Name, it: it.Name, offerings: offs})
				}
			}
		}
		if t.conflicts(o, hits) {
			conflicts[o.Name] = true
			continue
		}
		for _, h := range hits {
			t.record(o, h)
		}
	}
	return t, conflicts, nil
}

// hit is an instance type of a pool an overlay selects, with the offerings
// it selects.
type hit struct {
	pool, it  string
	offerings []offeringKey
}

// matchingOfferings are the offerings of it in pool that reqs select. The
// instance type must be compatible with them first: its labels, the pool's
// template labels and name, and the zones and capacity types of its
// offerings; then each offering's zone, capacity type and reservation must
// be allowed.
func matchingOfferings(p Pool, it *scheduling.InstanceType, reqs requirements.Requirements) []offeringKey {
	base := requirements.FromLabels(it.Labels)
	for _, r := range requirements.FromLabels(p.Labels) {
		base.Add(r)
	}
	base.Add(requirements.New(v1.NodePoolLabelKey, corev1.NodeSelectorOpIn, p.Name))
	var zones, capacityTypes []string
	for _, o := range it.Offerings {
		zones = append(zones, o.Zone)
		capacityTypes = append(capacityTypes, o.CapacityType)
	}
	base.Add(requirements.New(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...))
	base.Add(requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityTypes...))
	// Only reserved offerings carry a reservation; the offerings decide.
	if !base.IsCompatible(reqs, requirements.NewKeySet(scheduling.ReservationKeys...)) {
		return nil
	}
	var out []offeringKey
	for _, o := range it.Offerings {
		own := requirements.NewRequirements(
			requirements.New(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, o.Zone),
			requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
		)
		rl := o.ReservationLabels()
		for _, key := range scheduling.ReservationKeys {
			if v, ok := rl[key]; ok {
				own.Add(requirements.New(key, corev1.NodeSelectorOpIn, v))
			} else {
				own.Add(requirements.New(key, corev1.NodeSelectorOpDoesNotExist))
			}
		}
		if own.Intersects(reqs) == nil {
			out = append(out, keyOf(o))
		}
	}
	return out
}

// conflicts reports whether o changes something an overlay of its weight
// already changes on one of the hits.
func (t *Table) conflicts(o *v1alpha1.NodeOverlay, hits []hit) bool {
	w := o.Weight()
	for _, h := range hits {
		tc := t.changes[h.pool][h.it]
		if tc == nil {
			continue
		}
		if o.PriceChange() != "" {
			for _, k := range h.offerings {
				if pc, ok := tc.prices[k]; ok && pc.lowestWeight == w {
					return true
				}
			}
		}
		if len(o.Spec.Capacity) > 0 && tc.lowestCapacityWeight == w {
			for name := range o.Spec.Capacity {
				if _, ok := tc.lowestCapacity[name]; ok {
					return true
				}
			}
		}
	}
	return false
}

// record merges o into the table for one hit: a price change only where no
// heavier overlay set one, each resource only where no heavier overlay
// set it.
func (t *Table) record(o *v1alpha1.NodeOverlay, h hit) {
	change := o.PriceChange()
	if change == "" && len(o.Spec.Capacity) == 0 {
		return
	}
	if t.changes[h.pool] == nil {
		t.changes[h.pool] = map[string]*typeChange{}
	}
	tc := t.changes[h.pool][h.it]
	if tc == nil {
		tc = &typeChange{prices: map[offeringKey]*priceChange{}, capacity: corev1.ResourceList{}}
		t.changes[h.pool][h.it] = tc
	}
	w := o.Weight()
	if change != "" {
		for _, k := range h.offerings {
			if pc, ok := tc.prices[k]; ok {
				pc.lowestWeight = w
				continue
			}
			tc.prices[k] = &priceChange{change: change, lowestWeight: w}
		}
	}
	if len(o.Spec.Capacity) > 0 {
		for name, q := range o.Spec.Capacity {
			if _, ok := tc.capacity[name]; !ok {
				tc.capacity[name] = q.DeepCopy()
			}
		}
		tc.lowestCapacity = o.Spec.Capacity
		tc.lowestCapacityWeight = w
	}
}

// NotEvaluatedError is returned for a pool the overlays have not been
// evaluated against yet: its instance types cannot be offered until they
// are, or an overlay meant for them would be missed.
type NotEvaluatedError struct{ Pool string }

func (e *NotEvaluatedError) Error() string {
	return fmt.Sprintf("NodeOverlays have not been evaluated for NodePool %s yet; its instance types are offered once they are", e.Pool)
}

// Apply returns the pool's instance types with the table's changes: new
// values for the changed types and offerings, the others shared unchanged
// (the input is never modified, as the cloud's lists are cached).
func (t *Table) Apply(pool string, its []*scheduling.InstanceType) ([]*scheduling.InstanceType, error) {
	if !t.evaluated[pool] {
		return nil, &NotEvaluatedError{Pool: pool}
	}
	changes := t.changes[pool]
	if len(changes) == 0 {
		return its, nil
	}
	out := make([]*scheduling.InstanceType, len(its))
	for i, it := range its {
		tc := changes[it.Name]
		if tc == nil {
			out[i] = it
			continue
		}
		out[i] = tc.apply(it)
	}
	return out, nil
}

func (tc *typeChange) apply(it *scheduling.InstanceType) *scheduling.InstanceType {
	c := *it
	if len(tc.capacity) > 0 {
		c.Capacity = it.Capacity.DeepCopy()
		c.Allocatable = it.Allocatable.DeepCopy()
		if c.Capacity == nil {
			c.Capacity = corev1.ResourceList{}
		}
		if c.Allocatable == nil {
			c.Allocatable = corev1.ResourceList{}
		}
		// Extended resources have no kubelet overhead: what the device
		// plugin registers is allocatable.
		for name, q := range tc.capacity {
			c.Capacity[name] = q.DeepCopy()
			c.Allocatable[name] = q.DeepCopy()
		}
		c.CapacityOverlaid = true
	}
	if len(tc.prices) > 0 {
		c.Offerings = make([]scheduling.Offering, len(it.Offerings))
		for i, o := range it.Offerings {
			if pc, ok := tc.prices[keyOf(o)]; ok {
				o.Price = AdjustedPrice(o.Price, pc.change)
				o.PriceOverlaid = true
			}
			c.Offerings[i] = o
		}
	}
	return &c
}

// Empty is a table in which no pool is evaluated yet.
func Empty() *Table {
	return &Table{changes: map[string]map[string]*typeChange{}, evaluated: map[string]bool{}}
}

// Valid splits overlays into those Evaluate may apply and, by name, the
// Validate errors of the rest.
func Valid(all []v1alpha1.NodeOverlay) ([]v1alpha1.NodeOverlay, map[string]error) {
	var valid []v1alpha1.NodeOverlay
	invalid := map[string]error{}
	for _, o := range all {
		if err := o.Validate(); err != nil {
			invalid[o.Name] = err
			continue
		}
		valid = append(valid, o)
	}
	return valid, invalid
}
