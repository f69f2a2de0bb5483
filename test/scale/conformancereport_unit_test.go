package scale

import (
	"strings"
	"testing"
)

// TestConformanceTable checks the report reading and the table on a ginkgo
// report's shape: only It nodes count, timeouts are marked, a spec that
// passes on Karpenter and not on Joist is listed as such, and one that fails
// on both in the second list.
func TestConformanceTable(t *testing.T) {
	report := func(states ...string) map[string]specResult {
		var b strings.Builder
		b.WriteString(`[{"SuiteDescription":"NodeClaim","SpecReports":[{"LeafNodeType":"BeforeSuite","State":"passed"}`)
		for i, s := range states {
			msg := ""
			if s == "failed" {
				msg = "Timed out after 180.000s.\\nExpected nodes"
			}
			b.WriteString(`,{"ContainerHierarchyTexts":["GarbageCollection"],"LeafNodeType":"It","LeafNodeText":"spec ` +
				string(rune('a'+i)) + `","State":"` + s + `","Failure":{"Message":"` + msg + `"}}`)
		}
		b.WriteString(`]}]`)
		specs, err := parseGinkgoReport([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		return specs
	}
	karpenter := suiteResults{"nodeclaim": report("passed", "passed", "failed", "passed")}
	joist := suiteResults{"nodeclaim": report("passed", "failed", "failed", "skipped")}
	got := conformanceTable("v1.15.1", karpenter, joist)
	for _, want := range []string{
		"| nodeclaim | 4 | 3 of 4 run | 1 of 3 run |",
		"- nodeclaim: GarbageCollection spec b (failed, timeout): Timed out after 180.000s.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	gaps, both, _ := strings.Cut(got, "Specs that fail on both")
	if strings.Contains(gaps, "spec c") || strings.Contains(got, "spec a (") || strings.Contains(got, "spec d (") {
		t.Errorf("the first list has a spec that did not pass on Karpenter only:\n%s", got)
	}
	if !strings.Contains(both, "- nodeclaim: GarbageCollection spec c (failed, timeout)") || strings.Contains(both, "spec b") {
		t.Errorf("the second list is not the spec that failed on both:\n%s", got)
	}
}
