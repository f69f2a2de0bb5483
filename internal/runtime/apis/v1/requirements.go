package v1

import corev1 "k8s.io/api/core/v1"

// Requirements are the node selector requirements of a NodePool template or
// a NodeClaim. Entries with the same key are intersected.
// +kubebuilder:validation:MaxItems:=100
// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.all(x, x.operator == 'In' ? has(x.values) && x.values.size() != 0 : true)"
// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",rule="self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (has(x.values) && x.values.size() == 1 && x.values[0].matches('^[0-9]+$')) : true)"
// +kubebuilder:validation:XValidation:message="requirements with 'minValues' must have at least that many values specified in the 'values' field",rule="self.all(x, (x.operator == 'In' && has(x.minValues)) ? has(x.values) && x.values.size() >= x.minValues : true)"
type Requirements []NodeSelectorRequirementWithMinValues

// Taints are node taints with the effect and key checked by the CRD, which
// corev1.Taint's own schema leaves open.
// +kubebuilder:validation:XValidation:message="taint effect must be one of 'NoSchedule', 'PreferNoSchedule', 'NoExecute'",rule="self.all(t, t.effect in ['NoSchedule', 'PreferNoSchedule', 'NoExecute'])"
// +kubebuilder:validation:XValidation:message="taint key must be a qualified name such as 'example.com/dedicated'",rule="self.all(t, t.key.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*(\\\\/))?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$'))"
type Taints []corev1.Taint
