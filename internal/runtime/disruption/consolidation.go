package disruption

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// MinSpotToSpotTypes is how many cheaper spot instance types a single spot
// node's replacement must be able to choose from; the replacement launch is
// limited to that many cheapest, so the spot allocation strategy cannot
// pick a type that would itself be consolidated right away.
const MinSpotToSpotTypes = 15

// Unconsolidatable explains why a set of candidates cannot be consolidated.
type Unconsolidatable struct{ Reason string }

func (u *Unconsolidatable) Error() string { return u.Reason }

func unconsolidatable(format string, args ...any) *Unconsolidatable {
	return &Unconsolidatable{Reason: fmt.Sprintf(format, args...)}
}

// Consolidate decides whether the candidates can be removed, with at most
// one cheaper replacement. method is MethodMultiNode or MethodSingleNode.
func Consolidate(env *Env, method string, candidates []*Candidate) (*Command, error) {
	sim, err := Simulate(env, candidates)
	if err != nil {
		return nil, err
	}
	if len(sim.Unplaced) > 0 {
		pe := sim.Unplaced[0]
		return nil, unconsolidatable("not all pods would schedule, %s/%s: %s", pe.Pod.Namespace, pe.Pod.Name, pe.Err)
	}
	cmd := &Command{Method: method, Reason: v1.DisruptionReasonUnderutilized, Candidates: candidates}
	switch n := len(sim.Plan.NewClaims); {
	case n == 0:
		return cmd, nil
	case n > 1:
		return nil, unconsolidatable("can't remove without creating %d nodes", n)
	}
	replacement, err := cheaperReplacement(env, method, candidates, sim.Plan.NewClaims[0])
	if err != nil {
		return nil, err
	}
	cmd.Replacements = []*scheduling.NewClaim{replacement}
	return cmd, nil
}

// cheaperReplacement narrows the solver's claim to the instance types that
// make the move worth it, applying the spot rules.
func cheaperReplacement(env *Env, method string, candidates []*Candidate, nc *scheduling.NewClaim) (*scheduling.NewClaim, error) {
	var total float64
	allSpot := true
	for _, c := range candidates {
		total += c.Price
		allSpot = allSpot && c.CapacityType == v1.CapacityTypeSpot
	}
	capacityTypes := nc.Requirements.Get(v1.CapacityTypeLabelKey)
	spotAllowed := capacityTypes.Has(v1.CapacityTypeSpot)
	if allSpot && spotAllowed && !env.SpotToSpot {
		return nil, unconsolidatable("SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node")
	}
	options := cheaperThan(nc.InstanceTypes, total)
	if method == MethodMultiNode {
		options = filterOutSameInstanceType(options, candidates)
	}
	if len(options) == 0 {
		return nil, unconsolidatable("can't replace with a cheaper node")
	}
	out := *nc
	out.Requirements = nc.Requirements.Clone()
	switch {
	case allSpot && spotAllowed:
		out.Requirements[v1.CapacityTypeLabelKey] = requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot)
		options = cheaperThan(withCapacityType(options, v1.CapacityTypeSpot), total)
		if method == MethodSingleNode && len(options) < MinSpotToSpotTypes {
			return nil, unconsolidatable("SpotToSpotConsolidation requires %d cheaper instance type options than the current candidate to consolidate, got %d",
				MinSpotToSpotTypes, len(options))
		}
		if len(options) > MinSpotToSpotTypes {
			options = options[:MinSpotToSpotTypes]
		}
	case spotAllowed && capacityTypes.Len() > 1 && len(withCapacityType(options, v1.CapacityTypeSpot)) > 0:
		// A replacement that may be spot or on-demand is pinned to spot, so
		// that a spot shortage does not end in a pricier on-demand node.
		out.Requirements[v1.CapacityTypeLabelKey] = requirements.New(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot)
		options = cheaperThan(withCapacityType(options, v1.CapacityTypeSpot), total)
	}
	if len(options) == 0 {
		return nil, unconsolidatable("can't replace with a cheaper node")
	}
	names := make([]string, 0, len(options))
	for _, o := range options {
		names = append(names, o.Type.Name)
	}
	out.Requirements[corev1.LabelInstanceTypeStable] = requirements.New(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, names...)
	out.InstanceTypes = options
	return &out, nil
}

// cheaperThan keeps options strictly cheaper than price, cheapest first.
func cheaperThan(options []scheduling.ClaimOption, price float64) []scheduling.ClaimOption {
	var out []scheduling.ClaimOption
	for _, o := range options {
		if o.Price < price {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Price < out[j].Price })
	return out
}

// filterOutSameInstanceType drops, when a candidate runs an instance type
// the replacement may use, every option at least as expensive as the
// cheapest such candidate: otherwise replacing several nodes could launch
// the same type as one of them and merely shuffle pods at no saving.
func filterOutSameInstanceType(options []scheduling.ClaimOption, candidates []*Candidate) []scheduling.ClaimOption {
	offered := map[string]bool{}
	for _, o := range options {
		offered[o.Type.Name] = true
	}
	limit := -1.0
	for _, c := range candidates {
		if offered[c.InstanceType.Name] && (limit < 0 || c.Price < limit) {
			limit = c.Price
		}
	}
	if limit < 0 {
		return options
	}
	return cheaperThan(options, limit)
}

// withCapacityType keeps options with an available offering of that
// capacity type, priced by it.
func withCapacityType(options []scheduling.ClaimOption, capacityType string) []scheduling.ClaimOption {
	var out []scheduling.ClaimOption
	for _, o := range options {
		var offs []scheduling.Offering
		price := -1.0
		for _, off := range o.Offerings {
			if off.CapacityType == capacityType && off.Available {
				offs = append(offs, off)
				if price < 0 || off.Price < price {
					price = off.Price
				}
			}
		}
		if len(offs) > 0 {
			out = append(out, scheduling.ClaimOption{Type: o.Type, Price: price, Offerings: offs})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Price < out[j].Price })
	return out
}

// underutilized are the consolidatable candidates of dynamic pools that
// consolidate underutilized nodes, the most worth moving (SavingsRatio)
// first. Static pools keep their nodes: only drift and expiry replace them.
func underutilized(candidates []*Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range candidates {
		d := c.Pool.Spec.Disruption
		if c.Pool.Spec.Replicas == nil && c.Consolidatable() && d.ConsolidateAfter.Duration != nil && d.ConsolidationPolicy != v1.ConsolidationPolicyWhenEmpty {
			out = append(out, c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].SavingsRatio() > out[j].SavingsRatio() })
	return out
}
