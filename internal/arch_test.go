// Package internal_test holds the architecture test: the import graph must
// stay inside the dependency table of DESIGN.md.
package internal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// The dependency table of DESIGN.md.
var (
	apis          = r("apis")
	utilities     = []string{r("events"), r("metrics"), r("periodic"), r("ratelimit"), r("ttlcache"), r("volumetopology")}
	pureRules     = []string{r("policy"), r("disruption/drift"), r("cloud/aws/instancetype"), r("operator/settings")}
	coreControl   = []string{r("provisioning"), r("nodeclaim/lifecycle"), r("nodeclaim/garbagecollection"), r("termination"), r("nodepool"), r("nodeoverlay")}
	awsControl    = []string{r("cloud/aws/controllers/capacityblock"), r("cloud/aws/controllers/interruption"), r("cloud/aws/controllers/nodeclass")}
	controllerMay = append([]string{r("state"), r("pods"), r("simulation"), r("scheduling"), "=" + r("cloud"), apis,
		// the NodeClaim condition and providerID helpers the NodeClaim
		// controllers, disruption and termination share
		"=" + r("nodeclaim"), r("policy"), r("disruption/drift")}, utilities...)
)

var table = []row{
	{name: "binary, sandbox, demo, hack, system tests", roots: []string{"", "internal/sandbox", "internal/demo", "hack", "test"}, may: []string{"*"}},
	{name: "provider", roots: []string{"internal/provider"},
		// instanceprofile: the rule for which instance profiles the runtime
		// made, so deleting a node role leaves everyone else's alone
		may: append([]string{apis, "internal/controllerdeploy", "=" + r("cloud/aws/instanceprofile")}, pureRules...)},
	{name: "controllerdeploy", roots: []string{"internal/controllerdeploy"}, may: []string{apis}},
	{name: "apis", roots: []string{apis}},
	{name: "scheduling", roots: []string{r("scheduling")}, may: []string{r("apis/requirements")},
		mayNot: []string{"sigs.k8s.io/controller-runtime", "k8s.io/client-go", "github.com/aws/"}},
	{name: "scheduling/oracle", roots: []string{r("scheduling/oracle")}, may: []string{r("scheduling"), r("apis/requirements")}, testOnly: true},
	{name: "controllers", roots: coreControl, may: controllerMay, controllers: true},
	{name: "disruption", roots: []string{r("disruption")}, may: controllerMay, controllers: true,
		// only to create replacement NodeClaims
		controllersMay: []string{r("provisioning")}},
	{name: "disruption/drift", roots: []string{r("disruption/drift")}, may: []string{apis, r("scheduling")}},
	{name: "AWS controllers", roots: awsControl, may: append([]string{r("cloud/aws")}, controllerMay...), controllers: true},
	{name: "nodeclaim helpers", roots: []string{r("nodeclaim")}, may: []string{apis, r("state")}},
	{name: "operator", roots: []string{r("operator")}, may: []string{"internal/runtime"},
		controllersMay: append(append([]string{r("disruption")}, coreControl...), awsControl...)},
	{name: "state", roots: []string{r("state")}, may: []string{apis, r("scheduling"), r("pods"), r("volumetopology")}},
	{name: "pods", roots: []string{r("pods")}, may: []string{apis}},
	{name: "simulation", roots: []string{r("simulation")}, may: []string{apis, r("state"), r("pods"), r("scheduling"), r("volumetopology")}},
	{name: "cloud", roots: []string{r("cloud")}, may: []string{apis, r("scheduling")}},
	{name: "cloud/aws", roots: []string{r("cloud/aws")}, may: []string{apis, "=" + r("cloud"), r("scheduling"), r("ttlcache"), "internal/sdkhttp"}},
	{name: "policy", roots: []string{r("policy")}},
	// the controller's settings and their rules: pure, so the provider
	// checks a joist_controller with them
	{name: "operator/settings", roots: []string{r("operator/settings")}},
	{name: "utilities", roots: utilities, may: []string{apis, "=" + r("cloud"), r("scheduling"), r("ttlcache")}},
	{name: "awssim", roots: []string{"internal/awssim"}, may: []string{"internal/sdkhttp"}},
	{name: "sdkhttp", roots: []string{"internal/sdkhttp"}},
	{name: "testenv", roots: []string{"internal/testenv"}, may: []string{"*"}, testOnly: true},
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
			if to, internal := rel(imp); internal && !under(to, "internal/awssim") && !under(to, "internal/sdkhttp") {
				violations = append(violations, fmt.Sprintf("%s's tests (awssim) may not import %s", pkg, to))
			}
		}
	}
	sort.Strings(violations)
	for _, v := range violations {
		t.Error(v)
	}
	if len(violations) > 0 {
		t.Log("the dependency table is in DESIGN.md and encoded in internal/arch_test.go")
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
		{r("disruption"), r("provisioning"), true},
		{r("disruption"), r("termination"), false},
		{r("disruption/conditions"), r("disruption/drift"), true},
		{r("termination"), r("nodeclaim"), true},
		{r("termination"), r("nodeclaim/lifecycle"), false},
		{r("provisioning"), r("cloud"), true},
		{r("provisioning"), r("cloud/aws"), false},
		{r("disruption/hash"), r("cloud/aws/instancetype"), false},
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
