package controllerdeploy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

// FieldManager owns the fields written here.
const FieldManager = "terraform-provider-joist"

// resources maps the kinds rendered here to their API resources.
var resources = map[string]schema.GroupVersionResource{
	"CustomResourceDefinition": {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	"Namespace":                {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":           {Version: "v1", Resource: "serviceaccounts"},
	"Service":                  {Version: "v1", Resource: "services"},
	"ConfigMap":                {Version: "v1", Resource: "configmaps"},
	"ClusterRole":              {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding":       {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":                     {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":              {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"Deployment":               {Group: "apps", Version: "v1", Resource: "deployments"},
	"PodDisruptionBudget":      {Group: "policy", Version: "v1", Resource: "poddisruptionbudgets"},
	"ServiceMonitor":           ServiceMonitorGVR,
}

// ServiceMonitorGVR is the Prometheus Operator's ServiceMonitor.
var ServiceMonitorGVR = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}

// NodeClaims is the NodeClaim API resource.
var NodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}

func client(dyn dynamic.Interface, u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvr, ok := resources[u.GetKind()]
	if !ok {
		return nil, fmt.Errorf("no API resource known for kind %s", u.GetKind())
	}
	if ns := u.GetNamespace(); ns != "" {
		return dyn.Resource(gvr).Namespace(ns), nil
	}
	return dyn.Resource(gvr), nil
}

func describe(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), ns, u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

// Apply writes objects in order with server-side apply, taking ownership of
// the fields from other managers.
func Apply(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		c, err := client(dyn, o)
		if err != nil {
			return err
		}
		data, err := json.Marshal(o.Object)
		if err != nil {
			return err
		}
		if _, err := c.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: FieldManager, Force: ptr(true)}); err != nil {
			return fmt.Errorf("applying %s: %w", describe(o), err)
		}
	}
	return nil
}

// Delete deletes objects in reverse order; missing ones are fine.
func Delete(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) error {
	for i := len(objs) - 1; i >= 0; i-- {
		o := objs[i]
		c, err := client(dyn, o)
		if err != nil {
			return err
		}
		if err := c.Delete(ctx, o.GetName(), metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", describe(o), err)
		}
	}
	return nil
}

// WaitGone waits until obj no longer exists, at most timeout.
func WaitGone(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured, timeout time.Duration) error {
	c, err := client(dyn, obj)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return poll(ctx, func() (bool, string, error) {
		_, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, describe(obj) + " still exists", err
	})
}

// Drift lists the objects whose live state lacks a field value the desired
// object sets (or that are missing). Fields the apiserver defaults or
// others own are not compared.
func Drift(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) ([]string, error) {
	var out []string
	for _, o := range objs {
		c, err := client(dyn, o)
		if err != nil {
			return nil, err
		}
		live, err := c.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			out = append(out, describe(o)+" is missing")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", describe(o), err)
		}
		if p := firstDifference(o.Object, live.Object, ""); p != "" {
			out = append(out, describe(o)+" differs at "+p)
		}
	}
	sort.Strings(out)
	return out, nil
}

// firstDifference returns the path of the first value of want that got does
// not hold; maps compare as subsets, lists element-wise with equal length.
func firstDifference(want, got any, path string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p := firstDifference(w[k], g[k], path+"."+k); p != "" {
				return p
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path
		}
		for i := range w {
			if p := firstDifference(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
		return ""
	case nil:
		return ""
	}
	if !reflect.DeepEqual(normalize(want), normalize(got)) {
		return path
	}
	return ""
}

// normalize makes JSON numbers comparable whatever their Go type.
func normalize(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	}
	return v
}

// CRDs parses the CRD manifests (file name -> YAML) in file-name order and
// returns them with a hash of their content.
func CRDs(manifests map[string][]byte) ([]*unstructured.Unstructured, string, error) {
	var names []string
	for n := range manifests {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	var out []*unstructured.Unstructured
	for _, n := range names {
		h.Write([]byte(n))
		h.Write(manifests[n])
		obj := map[string]any{}
		if err := yaml.Unmarshal(manifests[n], &obj); err != nil {
			return nil, "", fmt.Errorf("CRD manifest %s: %w", n, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetLabels(mergeLabels(u.GetLabels(), labels()))
		out = append(out, u)
	}
	return out, hex.EncodeToString(h.Sum(nil)), nil
}

// mergeLabels merges maps, later ones winning.
func mergeLabels(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// WaitEstablished waits until every CRD is Established.
func WaitEstablished(ctx context.Context, dyn dynamic.Interface, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		err := poll(ctx, func() (bool, string, error) {
			live, err := dyn.Resource(resources["CustomResourceDefinition"]).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			return condition(live, "Established") == "True", "CRD " + crd.GetName() + " is not Established", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func condition(u *unstructured.Unstructured, typ string) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			return s
		}
	}
	return ""
}

// poll checks every second until done or ctx ends; the error then carries
// the last status.
func poll(ctx context.Context, check func() (bool, string, error)) error {
	last := ""
	for {
		done, status, err := check()
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		if done {
			return nil
		}
		if status != "" {
			last = status
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting: %s", last)
		case <-time.After(time.Second):
		}
	}
}
