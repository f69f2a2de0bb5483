package v1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestRequirementsParse(t *testing.T) {
	two, three := 2, 3
	reqs, err := Requirements{
		{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b", "c"}, MinValues: &two},
		{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"c"}, MinValues: &three},
		{Key: "team", Operator: corev1.NodeSelectorOpGt, Values: []string{"x"}},
	}.Parse()
	if err == nil || !strings.Contains(err.Error(), "requirements[2] (team)") {
		t.Errorf("error %v, want the unparsable entry named by index and key", err)
	}
	it := reqs.Get(corev1.LabelInstanceTypeStable)
	if got := it.Values(); len(got) != 2 || got[0] != "a" || got[1] != "b" || it.MinValues == nil || *it.MinValues != 3 {
		t.Errorf("instance types %v minValues %v, want [a b] intersected with the larger minValues 3", got, it.MinValues)
	}
	if reqs.Has("team") {
		t.Error("the unparsable entry was kept")
	}
}
