package metrics

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func TestLabelValuesAreKarpenters(t *testing.T) {
	for in, want := range map[string]string{
		"WhenEmptyOrUnderutilized": "when_empty_or_underutilized",
		"WhenEmpty":                "when_empty",
		"Balanced":                 "balanced",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
	claim := &v1.NodeClaim{}
	if got := TerminationMode(claim); got != TerminationModeGraceful {
		t.Errorf("no terminationGracePeriod: %s", got)
	}
	claim.Spec.TerminationGracePeriod = &metav1.Duration{Duration: time.Hour}
	if got := TerminationMode(claim); got != TerminationModeEventual {
		t.Errorf("1h terminationGracePeriod: %s", got)
	}
	claim.Spec.TerminationGracePeriod = &metav1.Duration{}
	if got := TerminationMode(claim); got != TerminationModeForceful {
		t.Errorf("0s terminationGracePeriod: %s", got)
	}
	claim.Labels = map[string]string{v1.NodePoolLabelKey: "general"}
	if got := CreatedLabels("Drifted", claim); got[LabelReason] != "drifted" || got[LabelMinValuesRelaxed] != "false" || got[LabelNodePool] != "general" {
		t.Errorf("created labels %v", got)
	}
}
