package crds_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
)

// manifestCase is one file of testdata/valid or testdata/invalid: a manifest
// as a user writes it and what the apiserver must make of it.
type manifestCase struct {
	// Description says what the case covers.
	Description string `json:"description"`
	// Base, when set, is created first and Object is then sent as an update
	// of its spec (for immutability and transition rules).
	Base map[string]interface{} `json:"base,omitempty"`
	// Object is the manifest. Its metadata.name is replaced by one derived
	// from the file name, so cases never collide.
	Object map[string]interface{} `json:"object"`
	// Defaults (valid cases) maps dotted paths such as
	// spec.disruption.budgets[0].nodes to the value read back after create.
	Defaults map[string]interface{} `json:"defaults,omitempty"`
	// Error (invalid cases) gives fragments the apiserver's error must contain.
	Error *struct {
		// Field is the path the error names, e.g. spec.template.spec.requirements[0].operator.
		Field string `json:"field"`
		// Message is a fragment of the validation message.
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func loadCases(t *testing.T, dir string) map[string]manifestCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no test data in testdata/%s: %v", dir, err)
	}
	cases := map[string]manifestCase{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c manifestCase
		if err := yaml.UnmarshalStrict(raw, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if c.Description == "" || c.Object == nil {
			t.Fatalf("%s: description and object are required", file)
		}
		cases[strings.TrimSuffix(filepath.Base(file), ".yaml")] = c
	}
	return cases
}

var nonName = regexp.MustCompile(`[^a-z0-9-]+`)

func objectFor(name string, manifest map[string]interface{}) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: deepCopy(manifest)}
	u.SetName("t-" + nonName.ReplaceAllString(strings.ToLower(name), "-"))
	return u
}

func deepCopy(m map[string]interface{}) map[string]interface{} {
	raw, _ := json.Marshal(m)
	var out map[string]interface{}
	_ = json.Unmarshal(raw, &out)
	return out
}

func TestValidManifests(t *testing.T) {
	cases := loadCases(t, "valid")
	if len(cases) < 15 {
		t.Errorf("only %d valid manifests, want at least 15", len(cases))
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			obj := objectFor(name, c.Object)
			// A dry run runs defaulting and every validation and returns the
			// object as it would be stored, without leaving it behind.
			if err := sendValid(t, name, c, obj); err != nil {
				t.Fatalf("%s: rejected: %v", c.Description, err)
			}
			for path, want := range c.Defaults {
				got, ok := lookup(obj.Object, path)
				if !ok {
					t.Errorf("%s: %s is missing, want %v", c.Description, path, want)
					continue
				}
				if diff := semanticDiff(path, normalize(want), normalize(got)); diff != "" {
					t.Errorf("%s: %s", c.Description, diff)
				}
			}
			assertWireCompatible(t, obj)
		})
	}
}

// sendValid creates obj as a dry run, or with a base, creates the base and
// sends obj's spec as a dry-run update of it; obj is then what would be stored.
func sendValid(t *testing.T, name string, c manifestCase, obj *unstructured.Unstructured) error {
	ctx := testContext(t)
	if c.Base == nil {
		return kube.Create(ctx, obj, client.DryRunAll)
	}
	base := objectFor(name, c.Base)
	if err := kube.Create(ctx, base); err != nil {
		t.Fatalf("%s: base object rejected: %v", c.Description, err)
	}
	t.Cleanup(func() { _ = kube.Delete(testContext(t), base) })
	base.Object["spec"] = obj.Object["spec"]
	if err := kube.Update(ctx, base, client.DryRunAll); err != nil {
		return err
	}
	obj.Object = base.Object
	return nil
}

func TestInvalidManifests(t *testing.T) {
	cases := loadCases(t, "invalid")
	if len(cases) < 40 {
		t.Errorf("only %d invalid manifests, want at least 40", len(cases))
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if c.Error == nil || c.Error.Field == "" || c.Error.Message == "" {
				t.Fatalf("invalid case needs error.field and error.message")
			}
			err := sendInvalid(t, name, c)
			if err == nil {
				t.Fatalf("%s: accepted, want an error naming %s", c.Description, c.Error.Field)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("%s: got %v, want an Invalid error", c.Description, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.Error.Field) || !strings.Contains(msg, c.Error.Message) {
				t.Errorf("%s:\n error %q\n does not name field %q with message %q", c.Description, msg, c.Error.Field, c.Error.Message)
			}
		})
	}
}

// sendInvalid sends the case's object as sendValid does.
func sendInvalid(t *testing.T, name string, c manifestCase) error {
	return sendValid(t, name, c, objectFor(name, c.Object))
}

// assertWireCompatible decodes the stored object into the Go type, refusing
// fields the type does not know, encodes it again and checks that the spec
// means the same: the Go types read and write Karpenter's wire format.
func assertWireCompatible(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	var typed interface{}
	switch obj.GroupVersionKind() {
	case nodePoolGVK:
		typed = &v1.NodePool{}
	case nodeClaimGVK:
		typed = &v1.NodeClaim{}
	case ec2NodeClassGVK:
		typed = &awsv1.EC2NodeClass{}
	case nodeOverlayGVK:
		typed = &v1alpha1.NodeOverlay{}
	default:
		t.Fatalf("no Go type for %s", obj.GroupVersionKind())
	}
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		t.Fatalf("the Go type cannot read the stored %s: %v", obj.GetKind(), err)
	}
	back, err := json.Marshal(typed)
	if err != nil {
		t.Fatal(err)
	}
	var backObj map[string]interface{}
	if err := json.Unmarshal(back, &backObj); err != nil {
		t.Fatal(err)
	}
	if diff := semanticDiff("spec", normalize(obj.Object["spec"]), backObj["spec"]); diff != "" {
		t.Errorf("re-encoding the Go %s changes its spec: %s", obj.GetKind(), diff)
	}
}

// normalize gives a value the shapes encoding/json produces (float64 numbers).
func normalize(v interface{}) interface{} {
	raw, _ := json.Marshal(v)
	var out interface{}
	_ = json.Unmarshal(raw, &out)
	return out
}

// lookup follows a path like spec.disruption.budgets[0].nodes.
func lookup(obj map[string]interface{}, path string) (interface{}, bool) {
	var cur interface{} = obj
	for _, part := range strings.Split(path, ".") {
		key, indexes, _ := strings.Cut(part, "[")
		if key != "" {
			m, ok := cur.(map[string]interface{})
			if !ok {
				return nil, false
			}
			if cur, ok = m[key]; !ok {
				return nil, false
			}
		}
		for indexes != "" {
			var idx string
			idx, indexes, _ = strings.Cut(indexes, "]")
			indexes = strings.TrimPrefix(indexes, "[")
			i, err := strconv.Atoi(idx)
			list, ok := cur.([]interface{})
			if err != nil || !ok || i >= len(list) {
				return nil, false
			}
			cur = list[i]
		}
	}
	return cur, true
}

// semanticDiff compares two JSON values as the API means them: absent, null
// and empty collections are the same, and strings are equal if they are the
// same quantity ("1000" and "1k") or duration ("1h" and "1h0m0s").
func semanticDiff(path string, want, got interface{}) string {
	if isEmpty(want) && isEmpty(got) {
		return ""
	}
	switch w := want.(type) {
	case map[string]interface{}:
		g, ok := got.(map[string]interface{})
		if !ok {
			return fmt.Sprintf("%s: got %v, want %v", path, got, want)
		}
		for k := range union(w, g) {
			if diff := semanticDiff(path+"."+k, w[k], g[k]); diff != "" {
				return diff
			}
		}
		return ""
	case []interface{}:
		g, ok := got.([]interface{})
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %v, want %v", path, got, want)
		}
		for i := range w {
			if diff := semanticDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); diff != "" {
				return diff
			}
		}
		return ""
	default:
		// Quantities may be numbers or strings on the wire ("1000" and "1k").
		if sameString(scalarString(want), scalarString(got)) {
			return ""
		}
	}
	return fmt.Sprintf("%s: got %v, want %v", path, got, want)
}

func scalarString(v interface{}) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func sameString(a, b string) bool {
	if a == b {
		return true
	}
	if qa, err := resource.ParseQuantity(a); err == nil {
		if qb, err := resource.ParseQuantity(b); err == nil {
			return qa.Cmp(qb) == 0
		}
	}
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	return errA == nil && errB == nil && da == db
}

func isEmpty(v interface{}) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]interface{}:
		for _, e := range x {
			if !isEmpty(e) {
				return false
			}
		}
		return true
	case []interface{}:
		return len(x) == 0
	}
	return false
}

func union(a, b map[string]interface{}) map[string]struct{} {
	keys := map[string]struct{}{}
	for k := range a {
		keys[k] = struct{}{}
	}
	for k := range b {
		keys[k] = struct{}{}
	}
	return keys
}

// TestRuntimeInvalidManifestsAreAccepted checks the manifests of
// testdata/runtime-invalid, which Karpenter's CRDs accept and its controller
// (like Joist's) refuses on the object's status, are accepted by the
// apiserver too: the refusal is the runtime's and terraform plan's, not the
// CRD's.
func TestRuntimeInvalidManifestsAreAccepted(t *testing.T) {
	for name, c := range loadCases(t, "runtime-invalid") {
		t.Run(name, func(t *testing.T) {
			if c.Error == nil {
				t.Fatalf("%s: no error given", c.Description)
			}
			if err := kube.Create(testContext(t), objectFor(name, c.Object), client.DryRunAll); err != nil {
				t.Fatalf("%s: the apiserver refuses it: %v", c.Description, err)
			}
		})
	}
}
