package metrics

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// guideTable returns the series names in the first column of the table
// whose header row starts with header, in the compatibility guide.
func guideTable(t *testing.T, guide, header string) []string {
	t.Helper()
	start := strings.Index(guide, "| "+header+" |")
	if start < 0 {
		t.Fatalf("the compatibility guide has no table headed %q", header)
	}
	name := regexp.MustCompile("`(karpenter_[a-z0-9_]+)`")
	var names []string
	for i, line := range strings.Split(guide[start:], "\n") {
		if i > 0 && !strings.HasPrefix(line, "|") {
			break
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range name.FindAllStringSubmatch(first, -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// TestGuideAccountsForEveryKarpenterSeries: each series Karpenter v1.15
// declares is in exactly one of the compatibility guide's two tables,
// served or not served, and neither table names a series Karpenter does
// not have. (test/e2e checks that the served ones are served.)
func TestGuideAccountsForEveryKarpenterSeries(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "karpenter-v1.15-series.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var upstream []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			upstream = append(upstream, line)
		}
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "guides", "karpenter-compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	served := guideTable(t, string(b), "Karpenter series")
	notServed := guideTable(t, string(b), "Karpenter series not served")
	if len(served) == 0 || len(notServed) == 0 {
		t.Fatalf("served %d, not served %d: the tables did not parse", len(served), len(notServed))
	}
	seen := map[string]string{}
	for _, n := range served {
		seen[n] = "served"
	}
	for _, n := range notServed {
		if seen[n] != "" {
			t.Errorf("%s is in both tables", n)
		}
		seen[n] = "not served"
	}
	for _, n := range upstream {
		if seen[n] == "" {
			t.Errorf("%s (a Karpenter v1.15 series) is in neither table of the compatibility guide", n)
		}
	}
	for n := range seen {
		if !slices.Contains(upstream, n) {
			t.Errorf("the compatibility guide lists %s, which Karpenter v1.15 does not declare", n)
		}
	}
}
