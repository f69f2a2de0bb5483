package controllerdeploy

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func byKind(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind {
			return o
		}
	}
	t.Fatalf("no %s rendered", kind)
	return nil
}

func TestObjectsKeepTheControllerOffManagedNodes(t *testing.T) {
	objs, err := Objects(Spec{Image: "img:1", Settings: map[string]string{"CLUSTER_NAME": "demo", "INTERRUPTION_QUEUE": "demo"}, IRSARoleARN: "arn:aws:iam::1:role/x"})
	if err != nil {
		t.Fatal(err)
	}
	d := byKind(t, objs, "Deployment")
	replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	prio, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "priorityClassName")
	terms, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if replicas != 2 || prio != "system-cluster-critical" || len(terms) != 1 {
		t.Fatalf("replicas %d, priority %q, node selector terms %v", replicas, prio, terms)
	}
	expr := terms[0].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
	if expr["key"] != "karpenter.sh/nodepool" || expr["operator"] != "DoesNotExist" {
		t.Errorf("node affinity %v does not exclude managed nodes", expr)
	}
	env, err := Env(d)
	if err != nil {
		t.Fatal(err)
	}
	if env["CLUSTER_NAME"] != "demo" || env["CPU_REQUESTS"] != "1000" || env["LEADER_ELECTION_NAMESPACE"] != "kube-system" {
		t.Errorf("env = %v", env)
	}
	if _, ok := env["MEMORY_LIMIT"]; ok {
		t.Errorf("MEMORY_LIMIT comes from the pod and is no Deployment setting; env = %v", env)
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	var memLimit any
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		if e := e.(map[string]any); e["name"] == "MEMORY_LIMIT" {
			memLimit, _, _ = unstructured.NestedFieldNoCopy(e, "valueFrom", "resourceFieldRef", "resource")
		}
	}
	if memLimit != "limits.memory" {
		t.Errorf("MEMORY_LIMIT does not follow the container's memory limit (resourceFieldRef %v)", memLimit)
	}
	sa := byKind(t, objs, "ServiceAccount")
	if sa.GetAnnotations()["eks.amazonaws.com/role-arn"] != "arn:aws:iam::1:role/x" {
		t.Errorf("ServiceAccount annotations %v", sa.GetAnnotations())
	}
	maxUnavailable, _, _ := unstructured.NestedInt64(byKind(t, objs, "PodDisruptionBudget").Object, "spec", "maxUnavailable")
	if maxUnavailable != 1 {
		t.Errorf("PDB maxUnavailable = %d", maxUnavailable)
	}
	for _, rule := range clusterRules {
		for _, v := range rule.Verbs {
			if v == "*" {
				t.Errorf("cluster rule %v grants every verb", rule)
			}
		}
		for _, r := range rule.Resources {
			if r == "*" || r == "secrets" {
				t.Errorf("cluster rule grants %s", r)
			}
		}
	}
}

func TestObjectsRejectMissingSettings(t *testing.T) {
	if _, err := Objects(Spec{Image: "img"}); err == nil || !strings.Contains(err.Error(), "cluster_name") {
		t.Errorf("missing CLUSTER_NAME: err = %v", err)
	}
	if _, err := Objects(Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "x", "bad name": "1"}}); err == nil {
		t.Error("a setting that is not an environment variable name was accepted")
	}
	if _, err := Objects(Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "x"}, CPURequest: "lots"}); err == nil {
		t.Error("an invalid CPU quantity was accepted")
	}
}

func TestFirstDifference(t *testing.T) {
	live := map[string]any{
		"spec": map[string]any{"replicas": int64(2), "extra": "defaulted", "list": []any{map[string]any{"a": "1", "b": "server"}}},
	}
	cases := []struct {
		want map[string]any
		diff string
	}{
		{map[string]any{"spec": map[string]any{"replicas": 2}}, ""},
		{map[string]any{"spec": map[string]any{"replicas": float64(2), "list": []any{map[string]any{"a": "1"}}}}, ""},
		{map[string]any{"spec": map[string]any{"replicas": 3}}, ".spec.replicas"},
		{map[string]any{"spec": map[string]any{"list": []any{map[string]any{"a": "2"}}}}, ".spec.list[0].a"},
		{map[string]any{"spec": map[string]any{"list": []any{}}}, ".spec.list"},
		{map[string]any{"spec": map[string]any{"missing": "x"}}, ".spec.missing"},
	}
	for _, c := range cases {
		if got := firstDifference(c.want, live, ""); got != c.diff {
			t.Errorf("firstDifference(%v) = %q, want %q", c.want, got, c.diff)
		}
	}
}
