package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// kube is a client of an apiserver with the CRDs installed.
var kube client.Client

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, func(env *testenv.Env) error {
		kube = env.Kube.Client
		return nil
	}))
}

// manifestCase is the format of the API packages' testdata/{valid,invalid}.
type manifestCase struct {
	Description string         `json:"description"`
	Base        map[string]any `json:"base,omitempty"`
	Object      map[string]any `json:"object"`
	Defaults    map[string]any `json:"defaults,omitempty"`
	Error       *struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func loadCases(t *testing.T, kind string) map[string]manifestCase {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "runtime", "apis", "crds", "testdata", kind)
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifest cases in %s: %v", dir, err)
	}
	cases := map[string]manifestCase{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c manifestCase
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		c.Object = named(name, c.Object)
		if c.Base != nil {
			c.Base = named(name, c.Base)
		}
		cases[name] = c
	}
	return cases
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

func named(name string, obj map[string]any) map[string]any {
	obj = deepCopy(obj)
	obj["metadata"] = map[string]any{"name": "p-" + nonName.ReplaceAllString(strings.ToLower(name), "-")}
	return obj
}

// apiserverVerdict sends the case to the apiserver (dry run; a base object is
// created first and the object sent as its update).
func apiserverVerdict(t *testing.T, c manifestCase) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obj := &unstructured.Unstructured{Object: deepCopy(c.Object)}
	if c.Base == nil {
		return kube.Create(ctx, obj, client.DryRunAll)
	}
	base := &unstructured.Unstructured{Object: deepCopy(c.Base)}
	if err := kube.Create(ctx, base); err != nil {
		t.Fatalf("base object rejected: %v", err)
	}
	defer func() { _ = kube.Delete(context.Background(), base) }()
	base.Object["spec"] = obj.Object["spec"]
	return kube.Update(ctx, base, client.DryRunAll)
}

func TestParityWithTheAPIServerOnValidManifests(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range loadCases(t, "valid") {
		t.Run(name, func(t *testing.T) {
			if err := apiserverVerdict(t, c); err != nil {
				t.Fatalf("apiserver rejects %s: %v", c.Description, err)
			}
			if errs := v.Validate(c.Object, c.Base); len(errs) != 0 {
				t.Fatalf("apiserver accepts %s, Go validation rejects it: %v", c.Description, errs)
			}
			defaulted, err := v.Default(c.Object)
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range c.Defaults {
				got := at(defaulted, path)
				if !reflect.DeepEqual(jsonNormal(got), jsonNormal(want)) {
					t.Errorf("default of %s: Go gives %v, the apiserver %v", path, got, want)
				}
			}
		})
	}
}

func TestParityWithTheAPIServerOnInvalidManifests(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCases(t, "invalid")
	if len(cases) < 40 {
		t.Errorf("only %d invalid cases", len(cases))
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if err := apiserverVerdict(t, c); err == nil {
				t.Fatalf("apiserver accepts %s", c.Description)
			}
			errs := v.Validate(c.Object, c.Base)
			if len(errs) == 0 {
				t.Fatalf("apiserver rejects %s, Go validation accepts it", c.Description)
			}
			for _, e := range errs {
				if e.Type == ErrorTypeInternal {
					t.Errorf("internal error: %v", e)
				}
				p := e.Path.String()
				if strings.HasPrefix(p, c.Error.Field) && (len(p) == len(c.Error.Field) || strings.ContainsAny(p[len(c.Error.Field):][:1], ".[")) {
					return
				}
			}
			t.Errorf("%s: no Go error at or inside %s (the apiserver's field): %v", c.Description, c.Error.Field, errs)
		})
	}
}

// at reads a dotted path with [i] indexes, as the test data writes them.
func at(obj map[string]any, path string) any {
	var cur any = obj
	for _, part := range strings.Split(path, ".") {
		name, idx, hasIdx := strings.Cut(part, "[")
		m, _ := cur.(map[string]any)
		cur = m[name]
		if hasIdx {
			var i int
			fmt.Sscanf(idx, "%d]", &i)
			l, _ := cur.([]any)
			if i >= len(l) {
				return nil
			}
			cur = l[i]
		}
	}
	return cur
}

func jsonNormal(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}

// TestRuntimeInvalidManifestsFailAtPlan: what the CRDs accept (as
// Karpenter's do) and the runtime refuses on the object's status is refused
// here too, at the field and with the runtime's message.
func TestRuntimeInvalidManifestsFailAtPlan(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	cases := loadCases(t, "runtime-invalid")
	if len(cases) == 0 {
		t.Fatal("no runtime-invalid cases")
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			errs := v.Unsupported(c.Object)
			for _, e := range errs {
				if strings.HasPrefix(e.Path.String(), c.Error.Field) && strings.Contains(e.Message, strings.ReplaceAll(c.Error.Message, `\"`, `"`)) {
					return
				}
			}
			t.Errorf("%s: want an error at %s saying %q, got %v", c.Description, c.Error.Field, c.Error.Message, errs)
		})
	}
}

// TestUnsupportedNodePoolFields: static pools and Balanced consolidation,
// which the controller acts on, are not reported.
func TestUnsupportedNodePoolFields(t *testing.T) {
	v, err := New()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(spec string) map[string]any {
		var obj map[string]any
		raw := `{"apiVersion":"karpenter.sh/v1","kind":"NodePool","metadata":{"name":"p"},"spec":` + spec + `}`
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			t.Fatal(err)
		}
		return obj
	}
	template := `"template":{"spec":{"nodeClassRef":{"group":"karpenter.k8s.aws","kind":"EC2NodeClass","name":"d"},"requirements":[]}}`
	for _, c := range []struct {
		spec, field string
	}{
		{`{"replicas":3,` + template + `}`, ""},
		{`{"disruption":{"consolidationPolicy":"Balanced"},` + template + `}`, ""},
		{`{"disruption":{"consolidationPolicy":"WhenEmptyOrUnderutilized"},` + template + `}`, ""},
	} {
		errs := v.Unsupported(pool(c.spec))
		switch {
		case c.field == "" && len(errs) > 0:
			t.Errorf("%s: %v, want none", c.spec, errs)
		case c.field != "" && (len(errs) != 1 || errs[0].Path.String() != c.field || !strings.Contains(errs[0].Message, "not implemented")):
			t.Errorf("%s: %v, want one error at %s saying it is not implemented", c.spec, errs, c.field)
		}
	}
}
