package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions and SetConditions let condition helpers (such as
// k8s.io/apimachinery/pkg/api/meta.SetStatusCondition callers) treat every
// kind alike.

func (in *NodePool) GetConditions() []metav1.Condition           { return in.Status.Conditions }
func (in *NodePool) SetConditions(conditions []metav1.Condition) { in.Status.Conditions = conditions }

func (in *NodeClaim) GetConditions() []metav1.Condition           { return in.Status.Conditions }
func (in *NodeClaim) SetConditions(conditions []metav1.Condition) { in.Status.Conditions = conditions }
