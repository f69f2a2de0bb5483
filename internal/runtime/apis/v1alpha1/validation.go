package v1alpha1

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Condition types and reasons of a NodeOverlay, Karpenter's.
const (
	// ConditionTypeValidationSucceeded is False when the overlay is not
	// applied: it breaks a rule the CRD cannot express, or it conflicts with
	// another overlay of the same weight.
	ConditionTypeValidationSucceeded = "ValidationSucceeded"
	// ReasonRuntimeValidation and ReasonConflict say why it is False.
	ReasonRuntimeValidation = "RuntimeValidation"
	ReasonConflict          = "Conflict"
)

// Annotations a NodeClaim carries when an overlay changed the price or the
// capacity of an instance type it may launch as.
const (
	PriceOverlayAppliedAnnotationKey    = Group + "/price-overlay-applied"
	CapacityOverlayAppliedAnnotationKey = Group + "/capacity-overlay-applied"
)

// wellKnownResources are the resources an instance type brings itself; an
// overlay may only add others.
var wellKnownResources = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods}

// Validate checks what the CRD cannot: each requirement's key and values
// as the runtime reads them, and the resources of capacity. The controller
// reports its error on the overlay's ValidationSucceeded condition and
// applies nothing of an overlay that fails it.
func (in *NodeOverlay) Validate() error {
	var errs []error
	for i, r := range in.Spec.Requirements {
		field := fmt.Sprintf("spec.requirements[%d]", i)
		// An overlay may select by pool, unlike a pool's own requirements.
		if r.Key != v1.NodePoolLabelKey {
			if err := v1.IsRestrictedLabel(r.Key); err != nil {
				errs = append(errs, fmt.Errorf("%s.key %q: %w; select instance types by a well-known label or a label of the NodePool's template", field, r.Key, err))
			}
		}
		for _, msg := range validation.IsQualifiedName(r.Key) {
			errs = append(errs, fmt.Errorf("%s.key %q is not a qualified name: %s", field, r.Key, msg))
		}
		for _, value := range r.Values {
			for _, msg := range validation.IsValidLabelValue(value) {
				errs = append(errs, fmt.Errorf("%s.values: %q is not a label value: %s", field, value, msg))
			}
		}
		if _, err := requirements.Parse(r.NodeSelectorRequirement(), nil); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	for name := range in.Spec.Capacity {
		for _, known := range wellKnownResources {
			if name == known {
				errs = append(errs, fmt.Errorf("spec.capacity.%s: an overlay may only add extended resources; remove %s", name, name))
			}
		}
	}
	return errors.Join(errs...)
}

// Requirements parses the overlay's requirements (Validate has passed).
func (in *NodeOverlay) Requirements() (requirements.Requirements, error) {
	terms := make([]corev1.NodeSelectorRequirement, 0, len(in.Spec.Requirements))
	for _, r := range in.Spec.Requirements {
		terms = append(terms, r.NodeSelectorRequirement())
	}
	return requirements.FromNodeSelectorRequirements(terms, nil)
}
