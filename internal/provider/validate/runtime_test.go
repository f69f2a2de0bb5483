package validate

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNodePoolBurstableCPULabel: the opt-in label takes one value; any
// other is refused at the label instead of counting baseline CPU silently.
func TestNodePoolBurstableCPULabel(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(value string) map[string]any {
		var obj map[string]any
		raw := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":{"template":{"metadata":{"labels":{"joist.dev/burstable-cpu":"` + value +
			`"}},"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"d"},"requirements":[]}}}}`
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	if errs := v.Unsupported(pool("full")); len(errs) != 0 {
		t.Errorf("full: %v, want none", errs)
	}
	errs := v.Unsupported(pool("true"))
	if len(errs) != 1 || errs[0].Path.String() != `spec.template.metadata.labels.joist.dev/burstable-cpu` || !strings.Contains(errs[0].Message, `the only value is "full"`) {
		t.Errorf("true: %v, want one error at the label naming the only value", errs)
	}
}
