package validate

import (
	"encoding/json"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

// runtimeRules are the rules Karpenter's CRDs leave to its controller and
// the runtime applies on the object's status (awsv1.ValidateKubelet): run at
// plan too, so what the runtime would refuse never reaches a cluster.
func (v *Validator) runtimeRules(obj map[string]any) ErrorList {
	if v.gvkOf(obj).Kind != "EC2NodeClass" {
		return nil
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	var nc awsv1.EC2NodeClass
	if json.Unmarshal(raw, &nc) != nil {
		// Not of the type's shape: the schema's errors already say why.
		return nil
	}
	var errs ErrorList
	for _, e := range awsv1.ValidateKubelet(nc.Spec.Kubelet, nc.AMIFamily()) {
		errs = append(errs, &Error{Path: Path{}.Child("spec").Child("kubelet"), Type: ErrorTypeInvalid, Message: e.Error()})
	}
	return errs
}
