package scale

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ginkgoReport is the part of a ginkgo JSON report (--ginkgo.json-report)
// the table reads: one entry per suite run.
type ginkgoReport struct {
	SuiteDescription string
	SuiteSucceeded   bool
	SpecReports      []struct {
		ContainerHierarchyTexts []string
		LeafNodeType            string
		LeafNodeText            string
		State                   string
		Failure                 struct{ Message string }
	}
}

// specResult is one spec's outcome on one controller.
type specResult struct {
	State   string // ginkgo's: passed, failed, skipped, timedout, interrupted, ...
	Timeout bool   // failed on an Eventually that timed out
	Message string // the failure's first line
}

// suiteResults maps suite -> spec -> result; a suite whose report is
// missing is absent.
type suiteResults map[string]map[string]specResult

// readSuiteReports reads every <suite>.json under dir.
func readSuiteReports(dir string) (suiteResults, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := suiteResults{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		specs, err := parseGinkgoReport(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = specs
	}
	return out, nil
}

// parseGinkgoReport returns the specs (It nodes) of a report by their full
// text. A suite whose setup failed reports its specs skipped.
func parseGinkgoReport(b []byte) (map[string]specResult, error) {
	var reports []ginkgoReport
	if err := json.Unmarshal(b, &reports); err != nil {
		return nil, err
	}
	specs := map[string]specResult{}
	for _, r := range reports {
		for _, s := range r.SpecReports {
			if s.LeafNodeType != "It" {
				continue
			}
			name := strings.Join(append(append([]string{}, s.ContainerHierarchyTexts...), s.LeafNodeText), " ")
			msg, _, _ := strings.Cut(strings.TrimSpace(s.Failure.Message), "\n")
			specs[name] = specResult{
				State:   s.State,
				Timeout: s.State == "timedout" || strings.Contains(s.Failure.Message, "Timed out after"),
				Message: msg,
			}
		}
	}
	return specs, nil
}

// counts returns how many of a suite's specs ran (not skipped or pending)
// and how many passed.
func counts(specs map[string]specResult) (ran, passed int) {
	for _, s := range specs {
		switch s.State {
		case "passed":
			ran++
			passed++
		case "skipped", "pending":
		default:
			ran++
		}
	}
	return ran, passed
}

// conformanceTable renders, per suite, the specs that passed on each
// controller; then one line for every spec that passed on Karpenter and
// failed on Joist (one Joist did not reach is no difference), and one for
// every spec that failed on both, each with its
// classification where one is known (knownFailures).
func conformanceTable(version string, karpenter, joist suiteResults) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| suite | specs | passed on Karpenter %s | passed on Joist |\n|---|---|---|---|\n", version)
	all := map[string]bool{}
	for s := range karpenter {
		all[s] = true
	}
	for s := range joist {
		all[s] = true
	}
	var gaps, both []string
	for _, suite := range sortedKeys(all) {
		total := max(len(karpenter[suite]), len(joist[suite]))
		fmt.Fprintf(&b, "| %s | %d | %s | %s |\n", suite, total, passedCell(karpenter[suite]), passedCell(joist[suite]))
		if karpenter[suite] == nil || joist[suite] == nil {
			continue
		}
		for _, name := range sortedKeys(karpenter[suite]) {
			k, j := karpenter[suite][name], joist[suite][name]
			switch {
			case k.State == "passed" && failed(j):
				gaps = append(gaps, failureLine(suite, name, j))
			case failed(k) && failed(j):
				both = append(both, failureLine(suite, name, j))
			}
		}
	}
	writeList(&b, "Specs that pass on Karpenter and not on Joist:", gaps)
	writeList(&b, "Specs that fail on both, and why:", both)
	return b.String()
}

func writeList(b *strings.Builder, title string, lines []string) {
	b.WriteString("\n" + title + "\n\n")
	if len(lines) == 0 {
		b.WriteString("- none\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
}

// failed is a spec that ran and did not pass.
func failed(r specResult) bool {
	switch r.State {
	case "passed", "skipped", "pending", "":
		return false
	}
	return true
}

// passedCell is "passed of ran", or "not run" without a report.
func passedCell(specs map[string]specResult) string {
	if specs == nil {
		return "not run"
	}
	ran, passed := counts(specs)
	return fmt.Sprintf("%d of %d run", passed, ran)
}

// failureLine is one spec that did not pass on Joist, with its cause when
// known, else the failure's first line.
func failureLine(suite, name string, j specResult) string {
	state := j.State
	if state == "" {
		state = "absent"
	}
	if j.Timeout {
		state += ", timeout"
	}
	line := fmt.Sprintf("- %s: %s (%s)", suite, name, state)
	if j.Message == "A suite timeout occurred" {
		return line + ": cut short by the run's time limit per suite"
	}
	if why := knownFailure(suite, name); why != "" {
		line += ": " + why
	} else if j.Message != "" {
		line += ": " + truncate(j.Message, 160)
	}
	return line
}

// knownFailures classifies failures found by running the suites, by suite
// and a substring of the spec's text: Joist differs, awssim infidelity,
// sandbox limitation or needs real AWS.
var knownFailures = []struct{ suite, spec, why string }{
	{"interruption", "on spot interruption warning", "needs real AWS: the spec interrupts the instance with an FIS experiment, and awssim serves no FIS"},
	{"interruption", "interruptible reserved capacity", "awssim infidelity: no CreateInterruptibleCapacityReservationAllocation"},
	{"core-disruption", "Reboot should reboot", "Joist differs, deliberately: it refuses the RebootForRepair gate (unhealthy nodes are replaced, not rebooted)"},
	{"interruption", "instance status failure", "needs real AWS (a kernel panic sent through SSM fails the status checks) and a controller restarted without its queue, which the inert settings Deployment cannot do"},
}

func knownFailure(suite, name string) string {
	for _, f := range knownFailures {
		if f.suite == suite && strings.Contains(name, f.spec) {
			return f.why
		}
	}
	return ""
}
