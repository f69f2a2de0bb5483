package scale

import (
	"strings"
	"testing"
)

// TestConformanceTable checks the report reading and the table on a ginkgo
// report's shape: only It nodes count, timeouts are marked, and only specs
// that pass on Karpenter and not on Joist are listed.
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
	karpenter := suiteResults{"nodeclaim": report("passed", "passed", "failed", "skipped")}
	joist := suiteResults{"nodeclaim": report("passed", "failed", "failed", "skipped")}
	got := conformanceTable("v1.15.1", karpenter, joist)
	for _, want := range []string{
		"| nodeclaim | 4 | 2 of 3 run | 1 of 3 run |",
		"- nodeclaim: GarbageCollection spec b (failed, timeout): Timed out after 180.000s.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "spec c") || strings.Contains(got, "spec a (") {
		t.Errorf("table lists a spec that did not pass on Karpenter only:\n%s", got)
	}
}
