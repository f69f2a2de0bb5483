package termination_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/termination"
)

type machine struct {
	claim    *v1.NodeClaim
	node     *corev1.Node
	instance string
}

// newMachine launches an instance and creates its registered NodeClaim and
// Ready Node, both holding the termination finalizer.
func newMachine(t *testing.T, name string, mutate ...func(*v1.NodeClaim)) *machine {
	t.Helper()
	ctx := testContext(t)
	providerID, instance := launch(t)
	claim := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{v1.TerminationFinalizer}, Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec: v1.NodeClaimSpec{
			Requirements: v1.Requirements{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}},
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
		},
	}
	for _, m := range mutate {
		m(claim)
	}
	if err := kube.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	claim.Status.ProviderID = providerID
	claim.Status.NodeName = name
	if err := kube.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Finalizers: []string{v1.TerminationFinalizer}, Labels: map[string]string{v1.NodePoolLabelKey: "default"}},
		Spec:       corev1.NodeSpec{ProviderID: providerID},
	}
	if err := kube.Create(ctx, node); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("110")}
	if err := kube.Status().Update(ctx, node); err != nil {
		t.Fatal(err)
	}
	return &machine{claim: claim, node: node, instance: instance}
}

type podOpt func(*corev1.Pod)

func newPod(t *testing.T, m *machine, name string, opts ...podOpt) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{}},
		Spec: corev1.PodSpec{
			NodeName:   m.node.Name,
			Containers: []corev1.Container{{Name: "c", Image: "app"}},
		},
	}
	for _, o := range opts {
		o(pod)
	}
	ctx := testContext(t)
	if err := kube.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	// Running and Ready, as its kubelet would report: the Eviction API
	// ignores PDBs for pending pods.
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &metav1.Time{Time: time.Now()}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if err := kube.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	return pod
}

func daemon(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "ds-uid", Controller: new(true)}}
}
func critical(p *corev1.Pod)   { p.Spec.PriorityClassName = "system-node-critical" }
func label(k, v string) podOpt { return func(p *corev1.Pod) { p.Labels[k] = v } }
func doNotDisrupt(p *corev1.Pod) {
	p.Annotations = map[string]string{v1.DoNotDisruptAnnotationKey: "true"}
}

// eventually polls cond until it holds; the context's timeout is only a
// safety net for a broken controller.
func eventually(t *testing.T, what string, cond func(context.Context) bool) {
	t.Helper()
	ctx := testContext(t)
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			t.Fatalf("never happened: %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func isGone(ctx context.Context, obj client.Object) bool {
	return apierrors.IsNotFound(kube.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)))
}

// expectTerminated waits for the claim and Node to disappear and checks the
// instance was terminated.
func expectTerminated(t *testing.T, m *machine) {
	t.Helper()
	eventually(t, "nodeclaim and node removed", func(ctx context.Context) bool { return isGone(ctx, m.claim) && isGone(ctx, m.node) })
	if s := instanceState(t, m.instance); s != "shutting-down" && s != "terminated" {
		t.Fatalf("instance %s is %s after its NodeClaim was released", m.instance, s)
	}
}

func TestDeletingNodeClaimDrainsTierByTierAndTerminates(t *testing.T) {
	m := newMachine(t, "tiers")
	tiers := map[string]termination.Tier{}
	for _, p := range []*corev1.Pod{
		newPod(t, m, "tiers-critds", critical, daemon),
		newPod(t, m, "tiers-ds", daemon),
		newPod(t, m, "tiers-crit", critical),
		newPod(t, m, "tiers-app1"),
		newPod(t, m, "tiers-app2"),
	} {
		tiers[p.Name] = termination.TierOf(p)
	}
	// Record the order in which pods start leaving, and whether the Node was
	// ever seen tainted and excluded from load balancers.
	var mu sync.Mutex
	var order []string
	tainted := false
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := map[string]bool{}
		for ctx.Err() == nil {
			node := &corev1.Node{}
			if kube.Get(ctx, client.ObjectKeyFromObject(m.node), node) == nil && v1.HasDisruptedTaint(node) &&
				node.Labels[corev1.LabelNodeExcludeBalancers] == "karpenter" {
				mu.Lock()
				tainted = true
				mu.Unlock()
			}
			for name := range tiers {
				p := &corev1.Pod{}
				err := kube.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, p)
				if !seen[name] && (apierrors.IsNotFound(err) || (err == nil && p.DeletionTimestamp != nil)) {
					seen[name] = true
					mu.Lock()
					order = append(order, name)
					mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := kube.Delete(testContext(t), m.claim); err != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
	stop()
	<-done
	if len(order) != len(tiers) {
		t.Fatalf("saw %v leave, want all %d pods", order, len(tiers))
	}
	for i := 1; i < len(order); i++ {
		if tiers[order[i]] < tiers[order[i-1]] {
			t.Fatalf("pods left in order %v: %s (tier %d) before %s (tier %d)", order, order[i-1], tiers[order[i-1]], order[i], tiers[order[i]])
		}
	}
	if !tainted {
		t.Fatal("the node was never tainted karpenter.sh/disrupted:NoSchedule with the load-balancer exclusion label")
	}
	expectEvent(t, "tiers-app1", "Evicted")
}

func TestDeletingNodeDeletesNodeClaim(t *testing.T) {
	m := newMachine(t, "by-node")
	newPod(t, m, "by-node-app")
	if err := kube.Delete(testContext(t), m.node); err != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
}

func TestPDBBlocksEvictionUntilItAllows(t *testing.T) {
	ctx := testContext(t)
	m := newMachine(t, "pdb")
	pod := newPod(t, m, "pdb-guarded", label("app", "guarded"))
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "guarded"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(0)),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}},
		},
	}
	if err := kube.Create(ctx, pdb); err != nil {
		t.Fatal(err)
	}
	// No disruption controller runs here: write the status it would.
	setPDBStatus(t, pdb, 0)
	if err := kube.Delete(ctx, m.claim); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, pod.Name, "FailedDraining")
	current := &corev1.Pod{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(pod), current); err != nil || current.DeletionTimestamp != nil {
		t.Fatalf("the PDB-protected pod was removed (err %v): evictions must respect the PDB", err)
	}
	node := &corev1.Node{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(m.node), node); err != nil {
		t.Fatalf("the node went away while a PDB blocked its drain: %v", err)
	}
	setPDBStatus(t, pdb, 1)
	expectTerminated(t, m)
}

func setPDBStatus(t *testing.T, pdb *policyv1.PodDisruptionBudget, allowed int32) {
	t.Helper()
	ctx := testContext(t)
	if err := kube.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
		t.Fatal(err)
	}
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation, DisruptionsAllowed: allowed,
		CurrentHealthy: 1, DesiredHealthy: 1 - allowed, ExpectedPods: 1,
	}
	if err := kube.Status().Update(ctx, pdb); err != nil {
		t.Fatal(err)
	}
}

func TestDoNotDisruptPodIsWaitedFor(t *testing.T) {
	ctx := testContext(t)
	m := newMachine(t, "dnd")
	protected := newPod(t, m, "dnd-protected", doNotDisrupt)
	other := newPod(t, m, "dnd-other")
	if err := kube.Delete(ctx, m.claim); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the unprotected pod evicted and the claim reporting the protected one", func(ctx context.Context) bool {
		claim := &v1.NodeClaim{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(m.claim), claim); err != nil {
			return false
		}
		c := meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeDrained)
		return isGone(ctx, other) && c != nil && c.Status == metav1.ConditionUnknown && strings.Contains(c.Message, v1.DoNotDisruptAnnotationKey)
	})
	current := &corev1.Pod{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(protected), current); err != nil || current.DeletionTimestamp != nil {
		t.Fatalf("the do-not-disrupt pod was removed (err %v)", err)
	}
	patch := client.MergeFrom(current.DeepCopy())
	delete(current.Annotations, v1.DoNotDisruptAnnotationKey)
	if err := kube.Patch(ctx, current, patch); err != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
}

// The pod's grace period leaves the drain's 1 s requeue plenty of room on a
// loaded machine: a pass that came only at the deadline would delete the
// pod with no grace left, removing it at once, and this test could not
// tell that from a pod that was never deleted.
func TestTerminationGracePeriodDeletesPodsBeforeTheDeadline(t *testing.T) {
	ctx := testContext(t)
	m := newMachine(t, "tgp", func(c *v1.NodeClaim) { c.Spec.TerminationGracePeriod = &metav1.Duration{Duration: 16 * time.Second} })
	pod := newPod(t, m, "tgp-protected", doNotDisrupt, label(slowKubelet, "true"), func(p *corev1.Pod) {
		p.Spec.TerminationGracePeriodSeconds = new(int64(8))
	})
	if err := kube.Delete(ctx, m.claim); err != nil {
		t.Fatal(err)
	}
	var deadline time.Time
	eventually(t, "the termination deadline annotated", func(ctx context.Context) bool {
		claim := &v1.NodeClaim{}
		if kube.Get(ctx, client.ObjectKeyFromObject(m.claim), claim) != nil {
			return false
		}
		d, err := termination.AnnotatedDeadline(claim)
		if d == nil || err != nil {
			return false
		}
		if want := claim.DeletionTimestamp.Add(16 * time.Second); !d.Equal(want) {
			t.Fatalf("deadline %s, want deletion time + terminationGracePeriod = %s", d, want)
		}
		deadline = *d
		return true
	})
	current := &corev1.Pod{}
	eventually(t, "the do-not-disrupt pod deleted ahead of the deadline", func(ctx context.Context) bool {
		err := kube.Get(ctx, client.ObjectKeyFromObject(pod), current)
		if apierrors.IsNotFound(err) {
			t.Fatalf("the pod was removed outright: deleted with no grace period left, at the deadline %s rather than ahead of it", deadline)
		}
		return err == nil && current.DeletionTimestamp != nil
	})
	if g := current.DeletionGracePeriodSeconds; g == nil || *g > 8 {
		t.Fatalf("deleted with grace %v, want at most the pod's 8s", g)
	}
	// The pod's deletion completes by the node's deadline (1s of rounding).
	if current.DeletionTimestamp.After(deadline.Add(time.Second)) {
		t.Fatalf("pod deletion completes at %s, after the node deadline %s", current.DeletionTimestamp, deadline)
	}
	if err := kube.Delete(ctx, current, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
}

func TestVolumeAttachmentsAreAwaited(t *testing.T) {
	ctx := testContext(t)
	m := newMachine(t, "volumes")
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "volumes-pv"},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "ebs.csi.aws.com", NodeName: m.node.Name,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: new("pv-volumes")},
		},
	}
	if err := kube.Create(ctx, va); err != nil {
		t.Fatal(err)
	}
	if err := kube.Delete(ctx, m.claim); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the claim waiting for volume detachment", func(ctx context.Context) bool {
		claim := &v1.NodeClaim{}
		if kube.Get(ctx, client.ObjectKeyFromObject(m.claim), claim) != nil {
			return false
		}
		c := meta.FindStatusCondition(claim.Status.Conditions, v1.ConditionTypeVolumesDetached)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == "AwaitingVolumeDetachment"
	})
	node := &corev1.Node{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(m.node), node); err != nil || !controllerutil.ContainsFinalizer(node, v1.TerminationFinalizer) {
		t.Fatalf("the node was released with a volume still attached (err %v)", err)
	}
	if s := instanceState(t, m.instance); s != "running" {
		t.Fatalf("instance %s is %s while a volume is still attached", m.instance, s)
	}
	if err := kube.Delete(ctx, va); err != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
}

// expectEvent waits for an event with reason about the pod.
func expectEvent(t *testing.T, pod, reason string) {
	t.Helper()
	eventually(t, reason+" event for pod "+pod, func(ctx context.Context) bool {
		list := &eventsv1.EventList{}
		if err := kube.List(ctx, list, client.InNamespace("default")); err != nil {
			return false
		}
		for _, e := range list.Items {
			if e.Regarding.Name == pod && e.Reason == reason {
				return true
			}
		}
		return false
	})
}

// The Eviction API refuses pods of a namespace being deleted; the drain
// deletes them instead (the namespace's deletion overrides their PDBs), so
// the node does not wait on pods the namespace controller may be slow to
// remove. This apiserver has no namespace controller: without the drain's
// deletion the pod would stay forever.
func TestDrainDeletesPodsOfATerminatingNamespace(t *testing.T) {
	ctx := testContext(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "leaving"}}
	if err := kube.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	m := newMachine(t, "leaving-ns")
	pod := newPod(t, m, "leaving-app", func(p *corev1.Pod) { p.Namespace = ns.Name })
	if err := kube.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	eventually(t, "namespace terminating", func(ctx context.Context) bool {
		cur := &corev1.Namespace{}
		return kube.Get(ctx, client.ObjectKeyFromObject(ns), cur) == nil && cur.Status.Phase == corev1.NamespaceTerminating
	})
	if err := kube.Delete(ctx, m.claim); err != nil {
		t.Fatal(err)
	}
	expectTerminated(t, m)
	if !isGone(ctx, pod) {
		t.Error("the pod of the terminating namespace is still there after its node terminated")
	}
}
