package awsv1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// GetConditions and SetConditions match the NodePool and NodeClaim accessors.

func (in *EC2NodeClass) GetConditions() []metav1.Condition { return in.Status.Conditions }
func (in *EC2NodeClass) SetConditions(conditions []metav1.Condition) {
	in.Status.Conditions = conditions
}
