package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// waitTimeout bounds every wait; it is a failure bound, not a speed goal.
const waitTimeout = 4 * time.Minute

// eventually polls cond until it reports true, failing the test with its
// last explanation when waitTimeout passes.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	waitLong(t, what, waitTimeout, cond)
}

// waitLong is eventually with its own bound, for waits that outlast
// waitTimeout (the disruption queue's 10-minute command timeout).
func waitLong(t *testing.T, what string, bound time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(bound)
	last := ""
	for {
		ok, msg := cond()
		if ok {
			return
		}
		last = msg
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %s: %s", what, bound, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func create(t *testing.T, obj client.Object) {
	t.Helper()
	if err := worldOf(t).kube.Create(context.Background(), obj); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

func namespace(t *testing.T, name string) string {
	create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return name
}

// nodeClass creates an EC2NodeClass with alias al2023@latest and the
// cluster's discovery tags, and waits until it is Ready.
func nodeClass(t *testing.T, name string) *awsv1.EC2NodeClass {
	t.Helper()
	return nodeClassWith(t, name, func(*awsv1.EC2NodeClassSpec) {})
}

// nodeClassWith is nodeClass with the spec changed by edit before creation.
func nodeClassWith(t *testing.T, name string, edit func(*awsv1.EC2NodeClassSpec)) *awsv1.EC2NodeClass {
	t.Helper()
	tags := map[string]string{"karpenter.sh/discovery": clusterName}
	nc := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			Role:                       nodeRole,
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: tags}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: tags}},
		},
	}
	edit(&nc.Spec)
	create(t, nc)
	eventually(t, "EC2NodeClass "+name+" Ready", func() (bool, string) {
		got := &awsv1.EC2NodeClass{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		c := meta.FindStatusCondition(got.Status.Conditions, v1.ConditionTypeReady)
		if c == nil || c.Status != metav1.ConditionTrue {
			return false, fmt.Sprintf("conditions %v", got.Status.Conditions)
		}
		return true, ""
	})
	return nc
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// nodePool creates a NodePool on the node class and waits until it is Ready.
func nodePool(t *testing.T, name, class string, limits corev1.ResourceList, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodePool {
	t.Helper()
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: class},
				Requirements: append(v1.Requirements{
					req(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux"),
				}, reqs...),
				ExpireAfter: v1.MustParseNillableDuration("720h"),
			}},
			Disruption: v1.Disruption{ConsolidateAfter: v1.MustParseNillableDuration("Never"), ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized},
			Limits:     v1.Limits(limits),
		},
	}
	create(t, np)
	eventually(t, "NodePool "+name+" Ready", func() (bool, string) {
		got := &v1.NodePool{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		if !meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady) {
			return false, fmt.Sprintf("conditions %v", got.Status.Conditions)
		}
		return true, ""
	})
	return np
}

// podSpec is a pause container with requests, pinned to one NodePool.
func podSpec(pool string, requests corev1.ResourceList) corev1.PodSpec {
	return corev1.PodSpec{
		NodeSelector:                  map[string]string{v1.NodePoolLabelKey: pool},
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: requests},
		}},
	}
}

func deployment(ns, name string, replicas int32, spec corev1.PodSpec) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec.Containers[0].Name = "pause"
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

func requests(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func pods(t *testing.T, ns string, labels map[string]string) []corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := worldOf(t).kube.List(context.Background(), list, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return list.Items
}

// running counts Running pods, and says what the others wait for.
func running(ps []corev1.Pod) (int, string) {
	n := 0
	var waiting []string
	for _, p := range ps {
		if p.Status.Phase == corev1.PodRunning {
			n++
		} else if len(waiting) < 3 {
			waiting = append(waiting, fmt.Sprintf("%s=%s", p.Name, p.Status.Phase))
		}
	}
	return n, strings.Join(waiting, ", ")
}

func claimsOf(t *testing.T, pool string) []v1.NodeClaim {
	t.Helper()
	list := &v1.NodeClaimList{}
	if err := worldOf(t).kube.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		t.Fatalf("listing nodeclaims: %v", err)
	}
	return list.Items
}

func nodesOf(t *testing.T, pool string) []corev1.Node {
	t.Helper()
	list := &corev1.NodeList{}
	if err := worldOf(t).kube.List(context.Background(), list, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		t.Fatalf("listing nodes: %v", err)
	}
	return list.Items
}

// runtimeEvents are the events the controller reported about an object.
func runtimeEvents(t *testing.T, ns, name, reason string) []eventsv1.Event {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := worldOf(t).kube.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Name == name && e.Reason == reason && e.ReportingController == "karpenter" {
			out = append(out, e)
		}
	}
	return out
}
