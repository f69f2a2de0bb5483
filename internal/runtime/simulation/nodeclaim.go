package simulation

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// NewNodeClaim turns one of the solver's new claims into the NodeClaim to
// create from pool: Karpenter's metadata (generateName, owner reference,
// termination finalizer, template labels plus the NodePool and node class
// labels and custom single-valued requirements, template annotations plus
// the NodePool hash and minValues relaxation) and the template's spec with
// the solver's narrowed requirements and requests.
func NewNodeClaim(pool *v1.NodePool, nc *scheduling.NewClaim) *v1.NodeClaim {
	tmpl := pool.Spec.Template
	labels := map[string]string{}
	for k, v := range tmpl.Labels {
		labels[k] = v
	}
	for key, req := range nc.Requirements {
		if v, ok := req.SingleValue(); ok && !isWellKnown(key) && v1.IsRestrictedLabel(key) == nil {
			labels[key] = v
		}
	}
	labels[v1.NodePoolLabelKey] = pool.Name
	if ref := tmpl.Spec.NodeClassRef; ref != nil {
		labels[NodeClassLabelKey(ref)] = ref.Name
	}
	annotations := map[string]string{}
	for k, v := range tmpl.Annotations {
		annotations[k] = v
	}
	annotations[v1.NodePoolHashAnnotationKey] = pool.Hash()
	annotations[v1.NodePoolHashVersionAnnotationKey] = v1.NodePoolHashVersion
	annotations[v1.NodeClaimMinValuesRelaxedAnnotationKey] = strconv.FormatBool(nc.MinValuesRelaxed)
	// Karpenter marks the claims some of whose instance types a NodeOverlay
	// changed.
	for _, o := range nc.InstanceTypes {
		if slices.ContainsFunc(o.Type.Offerings, func(of scheduling.Offering) bool { return of.PriceOverlaid }) {
			annotations[v1alpha1.PriceOverlayAppliedAnnotationKey] = "true"
		}
		if o.Type.CapacityOverlaid {
			annotations[v1alpha1.CapacityOverlayAppliedAnnotationKey] = "true"
		}
	}

	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: pool.Name + "-",
			Labels:       labels,
			Annotations:  annotations,
			Finalizers:   []string{v1.TerminationFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         v1.SchemeGroupVersion.String(),
				Kind:               "NodePool",
				Name:               pool.Name,
				UID:                pool.UID,
				BlockOwnerDeletion: new(true),
			}},
		},
		Spec: v1.NodeClaimSpec{
			Taints:                 append([]corev1.Taint(nil), tmpl.Spec.Taints...),
			StartupTaints:          append([]corev1.Taint(nil), tmpl.Spec.StartupTaints...),
			Requirements:           claimRequirements(nc),
			Resources:              v1.ResourceRequirements{Requests: nc.Requests.DeepCopy()},
			NodeClassRef:           tmpl.Spec.NodeClassRef.DeepCopy(),
			TerminationGracePeriod: tmpl.Spec.TerminationGracePeriod.DeepCopy(),
			ExpireAfter:            tmpl.Spec.ExpireAfter,
		},
	}
	return claim
}

// NodeClassLabelKey is `<group>/<lowercase kind>`, e.g. karpenter.k8s.aws/ec2nodeclass.
func NodeClassLabelKey(ref *v1.NodeClassReference) string {
	return ref.Group + "/" + strings.ToLower(ref.Kind)
}

var wellKnown = requirements.NewKeySet(v1.WellKnownLabels...)

func isWellKnown(key string) bool { return wellKnown.Has(key) }

// claimRequirements renders the solver's requirements in API form, sorted
// by key, without the keys a NodeClaim may not carry (the hostname
// placeholder and other restricted labels). The instance types keep the
// solver's cheapest-first order.
func claimRequirements(nc *scheduling.NewClaim) v1.Requirements {
	reqs := nc.Requirements
	keys := reqs.Keys()
	sort.Strings(keys)
	var out v1.Requirements
	for _, key := range keys {
		if key != v1.NodePoolLabelKey && v1.IsRestrictedLabel(key) != nil {
			continue
		}
		r := reqs[key]
		if key == corev1.LabelInstanceTypeStable && r.Operator() == corev1.NodeSelectorOpIn {
			out = append(out, v1.NodeSelectorRequirementWithMinValues{
				Key: key, Operator: corev1.NodeSelectorOpIn, Values: cheapestFirst(nc, r), MinValues: r.MinValues,
			})
			continue
		}
		for _, nsr := range r.NodeSelectorRequirements() {
			out = append(out, v1.NodeSelectorRequirementWithMinValues{
				Key: nsr.Key, Operator: nsr.Operator, Values: nsr.Values, MinValues: r.MinValues,
			})
		}
	}
	return out
}

// cheapestFirst lists the claim's instance types in the solver's price
// order, keeping only those the requirement allows.
func cheapestFirst(nc *scheduling.NewClaim, r *requirements.Requirement) []string {
	out := make([]string, 0, len(nc.InstanceTypes))
	for _, o := range nc.InstanceTypes {
		if r.Has(o.Type.Name) {
			out = append(out, o.Type.Name)
		}
	}
	return out
}
