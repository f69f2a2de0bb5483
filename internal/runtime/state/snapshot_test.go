package state

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func apiserver(t *testing.T) client.Client { return testenv.KubeFor(t).Client }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	kube := apiserver(t)
	clk := clocktesting.NewFakeClock(time.Now())
	cluster := NewCluster(kube, clk)

	// A launched claim with its Node, a claim still launching, and a Node
	// the runtime does not manage.
	launched := &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-a", Labels: map[string]string{v1.NodePoolLabelKey: "pool"}},
		Spec: v1.NodeClaimSpec{
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
			Requirements: v1.Requirements{{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"m5.large"}}},
		},
	}
	inflight := launched.DeepCopy()
	inflight.Name = "pool-b"
	inflight.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	must(t, kube.Create(ctx, launched))
	must(t, kube.Create(ctx, inflight))
	launched.Status.ProviderID = "aws:///us-west-2a/i-1"
	must(t, kube.Status().Update(ctx, launched))
	for _, n := range []*corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}, Spec: corev1.NodeSpec{ProviderID: "aws:///us-west-2a/i-1",
			Taints: []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}, {Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "system"}},
	} {
		must(t, kube.Create(ctx, n))
	}
	mkPod := func(name, node string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
		must(t, kube.Create(ctx, p))
		return p
	}
	mkPod("bound", "node-a")
	finished := mkPod("finished", "node-a")
	finished.Status.Phase = corev1.PodSucceeded
	must(t, kube.Status().Update(ctx, finished))
	waiting := mkPod("waiting", "")
	mkPod("other", "")
	cluster.Nominate(waiting.UID, "pool-b", true, 20*time.Second)
	// A claim the informer showed and then deleted, and one it has not
	// shown yet.
	cluster.ClaimCreated(&v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pool-gone"}})
	cluster.ClaimObserved("pool-gone")
	cluster.ClaimCreated(&v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: "pool-lagging"},
		Spec: v1.NodeClaimSpec{Resources: v1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}})
	must(t, kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"team": "storage"}}}))

	snap, err := cluster.Snapshot(ctx)
	must(t, err)
	byName := map[string]*StateNode{}
	for _, n := range snap.Nodes {
		byName[n.Name()] = n
	}
	if len(snap.Nodes) != 4 || byName["pool-lagging"] == nil || !byName["pool-lagging"].InFlight() {
		t.Fatalf("nodes %v: want node-a (with its claim), system, in-flight pool-b and the created pool-lagging", keys(byName))
	}
	a := byName["node-a"]
	if a == nil || a.NodeClaim == nil || a.NodeClaim.Name != "pool-a" || a.InFlight() || a.NodePool() != "pool" {
		t.Fatalf("node-a not joined to its claim: %+v", a)
	}
	if len(a.Pods) != 1 || a.Pods[0].Name != "bound" {
		t.Errorf("node-a pods %v: want only the active bound pod", names(a.Pods))
	}
	if ts := a.Taints(); len(ts) != 1 || ts[0].Key != "dedicated" {
		t.Errorf("node-a taints %v: ephemeral taints are ignored for placement", ts)
	}
	b := byName["pool-b"]
	if b == nil || !b.InFlight() || len(b.Nominated) != 1 || b.Nominated[0].Name != "waiting" {
		t.Fatalf("in-flight pool-b: %+v", b)
	}
	if cpu := b.Allocatable()[corev1.ResourceCPU]; cpu.Cmp(resource.MustParse("3")) != 0 {
		t.Errorf("unlaunched claim allocatable %s, want its requests", cpu.String())
	}
	if sys := byName["system"]; sys == nil || sys.NodeClaim != nil || !sys.Initialized() {
		t.Errorf("unmanaged node: %+v", sys)
	}
	if len(snap.Pending) != 1 || snap.Pending[0].Name != "other" {
		t.Errorf("pending %v: the nominated pod is not pending again", names(snap.Pending))
	}
	if snap.NamespaceLabels["data"]["team"] != "storage" {
		t.Errorf("namespace labels %v: want data's team=storage for namespaceSelectors", snap.NamespaceLabels)
	}
	if _, ok := snap.NamespaceLabels["default"]; !ok {
		t.Errorf("namespace labels %v: every namespace is listed", snap.NamespaceLabels)
	}

	// The nomination expires; the pod is pending again.
	clk.Step(21 * time.Second)
	snap, err = cluster.Snapshot(ctx)
	must(t, err)
	if len(snap.Pending) != 2 {
		t.Errorf("pending %v after the nomination expired, want both", names(snap.Pending))
	}
}

func keys(m map[string]*StateNode) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func names(ps []*corev1.Pod) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestTransformPodKeepsWhatSchedulingReads(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations: map[string]string{lastApplied: "{...}", v1.DoNotDisruptAnnotationKey: "true"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"zone": "a"},
			Volumes: []corev1.Volume{
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
			},
			Containers: []corev1.Container{{Name: "c", Image: "nginx", Env: []corev1.EnvVar{{Name: "A", Value: "1"}},
				Ports:     []corev1.ContainerPort{{HostPort: 80, ContainerPort: 80}},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
		},
	}
	out, err := TransformPod(pod)
	must(t, err)
	p := out.(*corev1.Pod)
	c := p.Spec.Containers[0]
	if p.ManagedFields != nil || p.Annotations[lastApplied] != "" || c.Env != nil || c.Image != "" {
		t.Errorf("unread fields kept: %+v", p)
	}
	if len(p.Spec.Volumes) != 2 || p.Spec.Volumes[0].Name != "data" || p.Spec.Volumes[1].Name != "scratch" {
		t.Errorf("volumes kept = %+v, want the claim-backed data and scratch only", p.Spec.Volumes)
	}
	if p.Annotations[v1.DoNotDisruptAnnotationKey] != "true" || p.Spec.NodeSelector["zone"] != "a" || len(c.Ports) != 1 ||
		c.Resources.Requests.Cpu().Cmp(resource.MustParse("1")) != 0 {
		t.Errorf("read fields dropped: %+v", p)
	}
}

func TestVolumeObjectsReadsWhatPodsUse(t *testing.T) {
	ctx := context.Background()
	kube := apiserver(t)
	cluster := NewCluster(kube, clocktesting.NewFakeClock(time.Now()))
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	must(t, kube.Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "zonal"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc}))
	must(t, kube.Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-a"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}},
		},
	}))
	claim := func(name, class, volume string) {
		must(t, kube.Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				StorageClassName: &class, VolumeName: volume,
			},
		}))
	}
	claim("bound", "zonal", "pv-a")
	claim("unbound", "zonal", "")
	claim("orphan", "gone", "")
	vol := func(name, claim string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
	}
	pods := []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("x", "bound"), vol("y", "unbound")}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "b"}, Spec: corev1.PodSpec{Volumes: []corev1.Volume{vol("x", "bound"), vol("y", "orphan"), vol("z", "missing")}}},
	}
	objs, err := cluster.VolumeObjects(ctx, pods)
	must(t, err)
	key := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: "default", Name: name} }
	for _, name := range []string{"bound", "unbound", "orphan"} {
		if c := objs.Claims[key(name)]; c == nil || c.Name != name {
			t.Errorf("claim %s: %v", name, c)
		}
	}
	if c, ok := objs.Claims[key("missing")]; !ok || c != nil {
		t.Errorf("missing claim recorded as %v (present %v), want a nil entry", c, ok)
	}
	if pv := objs.Volumes["pv-a"]; pv == nil {
		t.Error("the bound claim's volume was not read")
	}
	if sc := objs.StorageClasses["zonal"]; sc == nil || *sc.VolumeBindingMode != wffc {
		t.Errorf("the unbound claim's class: %v", sc)
	}
	if sc, ok := objs.StorageClasses["gone"]; !ok || sc != nil {
		t.Errorf("missing class recorded as %v (present %v), want a nil entry", sc, ok)
	}
	if len(objs.Claims) != 4 || len(objs.Volumes) != 1 || len(objs.StorageClasses) != 2 {
		t.Errorf("read %d claims, %d volumes, %d classes; want each object once", len(objs.Claims), len(objs.Volumes), len(objs.StorageClasses))
	}
}

// kube-scheduler does not follow nominations: once a claim's Node is up,
// other pods may fill it. A nomination that no longer fits is dropped at
// the next snapshot instead of holding the pod back until its TTL.
func TestNominationToAFilledNodeIsDropped(t *testing.T) {
	ctx := context.Background()
	kube := apiserver(t)
	cluster := NewCluster(kube, clocktesting.NewFakeClock(time.Now()))

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "full"}}
	must(t, kube.Create(ctx, node))
	node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("110")}
	must(t, kube.Status().Update(ctx, node))
	mkPod := func(name, node, cpu string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		must(t, kube.Create(ctx, p))
		return p
	}
	mkPod("squatter", "full", "1500m")
	first := mkPod("first", "", "400m")
	second := mkPod("second", "", "400m")
	cluster.Nominate(first.UID, "full", false, time.Hour)
	cluster.Nominate(second.UID, "full", false, time.Hour)

	snap, err := cluster.Snapshot(ctx)
	must(t, err)
	var full *StateNode
	for _, n := range snap.Nodes {
		if n.Name() == "full" {
			full = n
		}
	}
	if full == nil || len(full.Nominated) != 1 {
		t.Fatalf("node full: %+v; want exactly one of the two nominations kept (1.5 + 0.4 fits 2 CPU, + 0.4 does not)", full)
	}
	if len(snap.Pending) != 1 || snap.Pending[0].Name == full.Nominated[0].Name {
		t.Fatalf("pending %v, nominated %v: the pod that no longer fits is pending again", names(snap.Pending), names(full.Nominated))
	}
	dropped := snap.Pending[0]
	if _, ok := cluster.NominatedTo(dropped.UID); ok {
		t.Errorf("pod %s still nominated after its node filled up", dropped.Name)
	}
	if _, ok := cluster.NominatedTo(full.Nominated[0].UID); !ok {
		t.Errorf("pod %s lost a nomination that still fits", full.Nominated[0].Name)
	}
}
