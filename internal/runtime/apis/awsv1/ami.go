package awsv1

import "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/requirements"

// AMIForLabels returns the first (newest) of amis whose requirements an
// instance type with these labels meets: the image the node class launches
// that type with.
func AMIForLabels(amis []AMI, labels map[string]string) (AMI, bool) {
	for _, a := range amis {
		reqs, err := requirements.FromNodeSelectorRequirements(a.Requirements, nil)
		if err != nil {
			continue
		}
		if reqs.MatchesLabels(labels) {
			return a, true
		}
	}
	return AMI{}, false
}
