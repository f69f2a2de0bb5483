package validate

import (
	"encoding/json"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Unsupported lists what the CRDs accept (as Karpenter's do) but Joist's
// controller would refuse on the object's status or has no behaviour for
// yet: the kubelet configurations awsv1.ValidateKubelet refuses. terraform
// plan reports them, so nothing accepted is silently ignored. Validate, which mirrors the
// apiserver, does not.
func (v *Validator) Unsupported(obj map[string]any) ErrorList {
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	var errs ErrorList
	add := func(p Path, msg string) {
		errs = append(errs, &Error{Path: p, Type: ErrorTypeNotSupported, Message: msg})
	}
	switch v.gvkOf(obj).Kind {
	case "NodePool":
		var np v1.NodePool
		if json.Unmarshal(raw, &np) != nil {
			return nil
		}
		if _, err := v1.BurstableCPU(np.Spec.Template.Labels); err != nil {
			add(Path{}.Child("spec").Child("template").Child("metadata").Child("labels").Key(v1.BurstableCPULabelKey), err.Error())
		}
	case "EC2NodeClass":
		var nc awsv1.EC2NodeClass
		if json.Unmarshal(raw, &nc) != nil {
			// Not of the type's shape: the schema's errors already say why.
			return nil
		}
		for _, e := range awsv1.ValidateKubelet(nc.Spec.Kubelet, nc.AMIFamily()) {
			add(Path{}.Child("spec").Child("kubelet"), e.Error())
		}
	}
	return errs
}
