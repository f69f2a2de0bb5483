package v1

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestNillableDurationJSON(t *testing.T) {
	for _, tc := range []struct {
		in    string
		never bool
		want  time.Duration
	}{
		{`"Never"`, true, 0},
		{`"720h"`, false, 720 * time.Hour},
		{`"1h30m"`, false, 90 * time.Minute},
		{`"0s"`, false, 0},
		{`"720h0m0s"`, false, 720 * time.Hour},
	} {
		var d NillableDuration
		if err := json.Unmarshal([]byte(tc.in), &d); err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if d.IsNever() != tc.never || (!tc.never && *d.Duration != tc.want) {
			t.Errorf("%s: got %v (never=%v)", tc.in, d.Duration, d.IsNever())
		}
		out, err := json.Marshal(d)
		if err != nil || string(out) != tc.in {
			t.Errorf("%s: marshalled back as %s, %v; want the same spelling", tc.in, out, err)
		}
	}
}

func TestNillableDurationRejectsBadValues(t *testing.T) {
	for _, in := range []string{`"5d"`, `"never"`, `""`, `720`, `null`} {
		var d NillableDuration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("%s: accepted as %v", in, d)
		}
	}
}

func TestNillableDurationZeroIsNever(t *testing.T) {
	out, err := json.Marshal(NillableDuration{})
	if err != nil || string(out) != `"Never"` {
		t.Fatalf("zero value marshalled as %s, %v", out, err)
	}
}

func TestNillableDurationChangedAfterParseUsesNewValue(t *testing.T) {
	d := MustParseNillableDuration("720h")
	*d.Duration = time.Hour
	if got := d.String(); got != "1h0m0s" {
		t.Fatalf("String() = %q after changing Duration, want the new value", got)
	}
}

func TestNillableDurationToUnstructured(t *testing.T) {
	np := &NodePool{Spec: NodePoolSpec{
		Template:   NodeClaimTemplate{Spec: NodeClaimTemplateSpec{ExpireAfter: MustParseNillableDuration("720h")}},
		Disruption: Disruption{ConsolidateAfter: NillableDuration{}},
	}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(np)
	if err != nil {
		t.Fatal(err)
	}
	expire, _, _ := unstructuredString(u, "spec", "template", "spec", "expireAfter")
	consolidate, _, _ := unstructuredString(u, "spec", "disruption", "consolidateAfter")
	if expire != "720h" || consolidate != Never {
		t.Fatalf("expireAfter=%q consolidateAfter=%q, want 720h and Never", expire, consolidate)
	}
	back := &NodePool{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, back); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Template.Spec.ExpireAfter.Duration == nil || *back.Spec.Template.Spec.ExpireAfter.Duration != 720*time.Hour || !back.Spec.Disruption.ConsolidateAfter.IsNever() {
		t.Fatalf("round trip gave expireAfter=%v consolidateAfter=%v", back.Spec.Template.Spec.ExpireAfter, back.Spec.Disruption.ConsolidateAfter)
	}
}

func unstructuredString(u map[string]interface{}, path ...string) (string, bool, error) {
	var cur interface{} = u
	for _, p := range path {
		m, ok := cur.(map[string]interface{})
		if !ok {
			return "", false, nil
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
