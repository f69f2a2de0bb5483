package v1

// Requirements are the node selector requirements of a NodePool template or
// a NodeClaim. Entries with the same key are intersected.
// +kubebuilder:validation:MaxItems:=100
// +kubebuilder:validation:XValidation:message="requirements with operator 'In' must have a value defined",rule="self.all(x, x.operator == 'In' ? has(x.values) && x.values.size() != 0 : true)"
// +kubebuilder:validation:XValidation:message="requirements operator 'Gt', 'Lt', 'Gte', or 'Lte' must have a single positive integer value",rule="self.all(x, (x.operator == 'Gt' || x.operator == 'Lt' || x.operator == 'Gte' || x.operator == 'Lte') ? (has(x.values) && x.values.size() == 1 && x.values[0].matches('^[0-9]+$')) : true)"
// +kubebuilder:validation:XValidation:message="requirements with 'minValues' must have at least that many values specified in the 'values' field",rule="self.all(x, (x.operator == 'In' && has(x.minValues)) ? has(x.values) && x.values.size() >= x.minValues : true)"
type Requirements []NodeSelectorRequirementWithMinValues
