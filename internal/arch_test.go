// Package internal_test holds the architecture test: the import graph must
// stay inside the dependency table of DESIGN.md.
package internal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/joistdev/terraform-provider-joist"

// row is a line of DESIGN.md's dependency table. Paths are relative to the
// module; a path stands for the package and its subpackages.
type row struct {
	name string
	// roots are the packages the row is about. A package may import
	// anything under its own root that the same row governs.
	roots []string
	// may are what else the packages may import besides the standard
	// library and third-party modules; "*" is anything, "=p" is p alone
	// (not its subpackages).
	may []string
	// mayNot are third-party import paths (prefixes) the packages may not
	// import.
	mayNot []string
	// controllers marks a row of controllers: other packages may import
	// them only where their row names the controller's root in
	// controllersMay.
	controllers bool
	// controllersMay are the controller roots the row may import.
	controllersMay []string
	// testOnly marks packages only tests may import.
	testOnly bool
}

func r(p string) string { return "internal/runtime/" + p }

// apis is the root of the API types, for the rules test below.
var apis = r("apis")

// table is DESIGN.md's dependency table, read once.
var table = mustReadTable()

func mustReadTable() []row {
	_, file, _, _ := runtime.Caller(0)
	doc, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "DESIGN.md"))
	if err != nil {
		panic(err)
	}
	t, err := parseTable(string(doc))
	if err != nil {
		panic(fmt.Sprintf("DESIGN.md: %v", err))
	}
	return t
}

// markdownTable is the rows of the table that follows marker in doc, each
// as its cells, without the header and separator lines.
func markdownTable(doc, marker string) ([][]string, error) {
	_, rest, ok := strings.Cut(doc, marker)
	if !ok {
		return nil, fmt.Errorf("no %q", marker)
	}
	var rows [][]string
	for i, line := range strings.Split(strings.TrimLeft(rest, "\n"), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		if i < 2 {
			continue // header and separator
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		rows = append(rows, cells)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no rows after %q", marker)
	}
	return rows, nil
}

// parseTable reads the groups and the dependency table of the design
// document: a path in backticks, "=path" for the package alone, "*", or a
// group's name; "." is the module root.
func parseTable(doc string) ([]row, error) {
	groupRows, err := markdownTable(doc, "<!-- groups: read by internal/arch_test.go -->")
	if err != nil {
		return nil, err
	}
	groups := map[string][]string{}
	var expand func(cell string) ([]string, error)
	expand = func(cell string) ([]string, error) {
		var out []string
		for _, tok := range strings.Split(cell, ",") {
			tok = strings.TrimSpace(tok)
			switch {
			case tok == "":
			case strings.HasPrefix(tok, "`") && strings.HasSuffix(tok, "`") && len(tok) > 2:
				p := strings.Trim(tok, "`")
				if p == "." {
					p = ""
				}
				out = append(out, p)
			default:
				g, ok := groups[tok]
				if !ok {
					return nil, fmt.Errorf("%q is neither a path in backticks nor a group", tok)
				}
				out = append(out, g...)
			}
		}
		return out, nil
	}
	for _, g := range groupRows {
		if len(g) != 2 {
			return nil, fmt.Errorf("group row %q: want 2 cells", g)
		}
		if groups[g[0]], err = expand(g[1]); err != nil {
			return nil, fmt.Errorf("group %s: %w", g[0], err)
		}
	}
	lines, err := markdownTable(doc, "<!-- dependency table: read by internal/arch_test.go -->")
	if err != nil {
		return nil, err
	}
	var out []row
	for _, l := range lines {
		if len(l) != 7 {
			return nil, fmt.Errorf("row %q: want 7 cells", l)
		}
		rw := row{name: l[0]}
		for _, c := range []struct {
			cell string
			to   *[]string
		}{{l[1], &rw.roots}, {l[2], &rw.may}, {l[3], &rw.controllersMay}, {l[4], &rw.mayNot}} {
			if *c.to, err = expand(c.cell); err != nil {
				return nil, fmt.Errorf("row %s: %w", l[0], err)
			}
		}
		switch l[5] {
		case "":
		case "controllers":
			rw.controllers = true
		case "tests only":
			rw.testOnly = true
		default:
			return nil, fmt.Errorf("row %s: kind %q is neither controllers nor tests only", l[0], l[5])
		}
		out = append(out, rw)
	}
	return out, nil
}

// under reports whether pkg is p or below it ("" is the module root only).
func under(pkg, p string) bool {
	if p == "" {
		return pkg == ""
	}
	return pkg == p || strings.HasPrefix(pkg, p+"/")
}

// rowOf is the row governing pkg and the root it falls under: the longest
// root that contains it.
func rowOf(pkg string) (*row, string) {
	var best *row
	root := ""
	found := false
	for i := range table {
		for _, rt := range table[i].roots {
			if under(pkg, rt) && (!found || len(rt) > len(root)) {
				best, root, found = &table[i], rt, true
			}
		}
	}
	return best, root
}

// allowed says why pkg may not import imp, or "" when it may.
func allowed(pkg, imp string) string {
	from, fromRoot := rowOf(pkg)
	to, toRoot := rowOf(imp)
	if from == nil {
		return fmt.Sprintf("%s is in no row of the table", pkg)
	}
	if to == nil {
		return fmt.Sprintf("%s is in no row of the table", imp)
	}
	if to.testOnly && from != to {
		return fmt.Sprintf("%s (%s) is for tests only", imp, to.name)
	}
	if from == to && fromRoot == toRoot {
		return ""
	}
	if to.controllers {
		for _, c := range from.controllersMay {
			if under(imp, c) {
				return ""
			}
		}
		return fmt.Sprintf("%s (%s) may not import the controller %s", pkg, from.name, imp)
	}
	for _, m := range from.may {
		if m == "*" || under(imp, m) || m == "="+imp {
			return ""
		}
	}
	return fmt.Sprintf("%s (%s) may not import %s (%s)", pkg, from.name, imp, to.name)
}

type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func importGraph(t *testing.T) []listed {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	if strings.HasPrefix(path, module+"/") {
		return strings.TrimPrefix(path, module+"/"), true
	}
	return "", false
}

// TestArchitecture fails on any import outside DESIGN.md's dependency
// table: product code is held to the table; tests may import anything to
// build their fixtures, except that awssim, the outside world, never
// reaches into the runtime or the provider.
func TestArchitecture(t *testing.T) {
	var violations []string
	for _, p := range importGraph(t) {
		pkg, ok := rel(p.ImportPath)
		if !ok {
			continue
		}
		from, _ := rowOf(pkg)
		for _, imp := range p.Imports {
			to, internal := rel(imp)
			if !internal {
				if from != nil {
					for _, banned := range from.mayNot {
						if strings.HasPrefix(imp, banned) {
							violations = append(violations, fmt.Sprintf("%s (%s) may not import %s", pkg, from.name, imp))
						}
					}
				}
				continue
			}
			if why := allowed(pkg, to); why != "" {
				violations = append(violations, why)
			}
		}
		if from == nil || from.name != "awssim" {
			continue
		}
		for _, imp := range append(p.TestImports, p.XTestImports...) {
			if to, internal := rel(imp); internal && allowed(pkg, to) != "" {
				violations = append(violations, fmt.Sprintf("%s's tests (awssim) may not import %s", pkg, to))
			}
		}
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
	if len(violations) > 0 {
		t.Log("the dependency table is DESIGN.md's: change the code or the table there")
	}
}

// TestArchitectureRules checks the table's reading on edges it must allow
// and refuse.
func TestArchitectureRules(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"internal/provider", r("disruption/drift"), true},
		{"internal/provider", r("cloud/aws/instancetype"), true},
		{"internal/provider", r("cloud/aws"), false},
		{"internal/provider", r("operator/settings"), true},
		{"internal/provider", r("operator"), false},
		{r("operator/settings"), r("cloud"), false},
		{"internal/provider", r("termination"), false},
		{r("disruption"), r("provisioning"), false},
		{r("nodepool/static"), r("disruption"), false},
		{r("nodepool/static"), r("provisioning"), false},
		{r("disruption"), r("simulation"), true},
		{r("disruption"), r("termination"), false},
		{r("nodeclaim/disruption"), r("disruption/drift"), true},
		{r("nodeclaim/disruption"), r("disruption"), false},
		{r("termination"), r("nodeclaim"), true},
		{r("termination"), r("nodeclaim/lifecycle"), false},
		{r("provisioning"), r("cloud"), true},
		{r("provisioning"), r("cloud/aws"), false},
		{r("nodepool/hash"), r("cloud/aws/instancetype"), false},
		{r("provisioning"), r("scheduling/oracle"), false},
		{r("cloud/aws/controllers/nodeclass"), r("cloud/aws/instancetype"), true},
		{r("cloud/aws/controllers/nodeclass"), r("cloud/aws/controllers/interruption"), false},
		{r("cloud/aws"), r("cloud/aws/controllers/nodeclass"), false},
		{r("scheduling"), apis + "/v1", false},
		{r("scheduling"), r("scheduling/oracle"), false},
		{r("operator"), r("termination"), true},
		{"internal/awssim/ec2", r("apis/v1"), false},
		{r("state"), "internal/testenv", false},
	} {
		if got := allowed(tc.from, tc.to) == ""; got != tc.ok {
			t.Errorf("%s -> %s allowed %v, want %v (%s)", tc.from, tc.to, got, tc.ok, allowed(tc.from, tc.to))
		}
	}
}
