package provisioning_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/provisioning"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/volumetopology"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

// world is a real apiserver, the simulated AWS behind the AWS provider, a
// Ready node class and NodePool, and a provisioner reading cluster state
// through a manager's informers, as the controller does.
type world struct {
	kube        client.Client
	cache       client.Reader
	provisioner *provisioning.Provisioner
	cloud       *awsprovider.Provider
	pool        *v1.NodePool
	cluster     *state.Cluster
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, provisioning.Options{NominationTTL: time.Hour})
}

// newWorldWith is newWorld with the provisioner's options and more NodePool
// requirements.
func newWorldWith(t *testing.T, opts provisioning.Options, reqs ...v1.NodeSelectorRequirementWithMinValues) *world {
	t.Helper()
	ctx := context.Background()
	sim, err := testenv.Start(awssim.Options{ClusterName: cluster})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	must(t, sim.CreateNodeRole(ctx))
	k := testenv.KubeFor(t)
	prov, err := awsprovider.New(sim.Config, k.Client, testenv.CloudSettings(cluster))
	if err != nil {
		t.Fatal(err)
	}
	must(t, prov.Start(ctx))

	nc := testenv.NodeClass("default", cluster, "al2023@latest")
	must(t, k.Client.Create(ctx, nc))
	nodeclass.Resolve(ctx, prov, nc)
	must(t, k.Client.Status().Update(ctx, nc))

	pool := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: "general"},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: awsv1.EC2NodeClassKind, Name: nc.Name},
			Requirements: append(v1.Requirements{
				testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand),
				testenv.In(v1.LabelInstanceCategory, "c", "m"),
			}, reqs...),
		}}},
	}
	must(t, k.Client.Create(ctx, pool))
	pool.Status.Conditions = []metav1.Condition{{Type: v1.ConditionTypeReady, Status: metav1.ConditionTrue, Reason: "Ready", LastTransitionTime: metav1.Now()}}
	must(t, k.Client.Status().Update(ctx, pool))

	mgr, err := manager.New(k.Config, manager.Options{Scheme: k.Scheme, Cache: state.CacheOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		t.Fatal(err)
	}
	must(t, state.Setup(ctx, mgr))
	mgrCtx, stop := context.WithCancel(ctx)
	t.Cleanup(stop) // before the apiserver stops, or it waits on the watches
	go func() { _ = mgr.Start(mgrCtx) }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("informer caches did not sync")
	}
	clk := clock.RealClock{}
	cs := state.NewCluster(mgr.GetCache(), clk)
	if err := cs.TrackClaims(ctx, mgr.GetCache()); err != nil {
		t.Fatal(err)
	}
	p := provisioning.NewProvisioner(k.Client, cs, prov, provisioning.NewBatcher(clk, time.Second, 10*time.Second),
		events.NewRecorder(mgr.GetEventRecorder("karpenter")), clk, opts)
	return &world{kube: k.Client, cache: mgr.GetCache(), provisioner: p, cloud: prov, pool: pool, cluster: cs}
}

// create writes obj and waits until the informers show it.
func (w *world) create(t *testing.T, obj client.Object) {
	t.Helper()
	must(t, w.kube.Create(context.Background(), obj))
	w.synced(t, obj)
}

// synced waits until the informers show each object as last written, so a
// pass sees what the test set up.
func (w *world) synced(t *testing.T, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		key := client.ObjectKeyFromObject(obj)
		seen := obj.DeepCopyObject().(client.Object)
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if err := w.cache.Get(context.Background(), key, seen); err == nil && seen.GetResourceVersion() == obj.GetResourceVersion() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the informers never showed %T %s at version %s", obj, key, obj.GetResourceVersion())
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pendingPod creates a pod kube-scheduler found no room for.
func (w *world) pendingPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	pod.Spec.Containers = []corev1.Container{{Name: "c", Image: "pause", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}
	must(t, w.kube.Create(ctx, pod))
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}
	must(t, w.kube.Status().Update(ctx, pod))
	w.synced(t, pod)
}

func (w *world) schedule(t *testing.T) *provisioning.Result {
	t.Helper()
	res, err := w.provisioner.Schedule(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// zonesOf is what a claim's zone requirement allows.
func zonesOf(claim *v1.NodeClaim) []string {
	for _, r := range claim.Spec.Requirements {
		if r.Key == corev1.LabelTopologyZone {
			if r.Operator != corev1.NodeSelectorOpIn {
				return []string{string(r.Operator)}
			}
			return r.Values
		}
	}
	return nil
}

// reasons lists the unassigned pods with why, for failure messages.
func reasons(res *provisioning.Result) []string {
	var out []string
	for _, pe := range res.Unassigned {
		out = append(out, pe.Pod.Name+": "+pe.Err.Error())
	}
	return out
}

func unassigned(res *provisioning.Result, name string) string {
	for _, pe := range res.Unassigned {
		if pe.Pod.Name == name {
			return pe.Err.Error()
		}
	}
	return ""
}

// pvc is a claim of class, bound to volume unless that is empty.
func pvc(name, class, volume string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
			StorageClassName: &class, VolumeName: volume,
		},
	}
	if volume != "" {
		// What the PersistentVolume controller adds once it bound the pair.
		c.Annotations = map[string]string{volumetopology.BindCompletedAnnotation: "yes"}
	}
	return c
}

func claimVolume(name, claim string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

// TestScheduleUsesClusterStorageAndNamespaces runs scheduling passes against
// the real apiserver: a bound volume's zone and a namespace's labels, both
// read from cluster state, decide where the NodeClaims go.
func TestScheduleUsesClusterStorageAndNamespaces(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()

	t.Run("volumes pin claims to their zones", func(t *testing.T) {
		// A bound volume, with the EBS CSI driver's own zone key as older
		// driver versions write it.
		w.create(t, &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pv-db"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-db"}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.ebs.csi.aws.com/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-west-2c"}}},
				}}}},
			},
		})
		wffc := storagev1.VolumeBindingWaitForFirstConsumer
		w.create(t, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc})
		// An unbound claim whose class provisions only in us-west-2a.
		w.create(t, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "gp3-2a"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc,
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"us-west-2a"}}}}}})
		w.create(t, pvc("data-db", "gp3", "pv-db"))
		w.create(t, pvc("data-scratch", "gp3-2a", ""))
		w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db"},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-db")}}})
		w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "scratch"},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-scratch")}}})
		w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "orphan"},
			Spec: corev1.PodSpec{Volumes: []corev1.Volume{claimVolume("data", "data-not-created")}}})

		res := w.schedule(t)
		if len(res.Created) != 2 {
			t.Fatalf("created %d nodeclaims, want one each for db and scratch; unassigned %q", len(res.Created), reasons(res))
		}
		var got [][]string
		for _, c := range res.Created {
			got = append(got, zonesOf(c))
		}
		slices.SortFunc(got, slices.Compare)
		if want := [][]string{{"us-west-2a"}, {"us-west-2c"}}; !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("claim zones %v, want us-west-2a (scratch's storage class) and us-west-2c (db's volume)", got)
		}
		if reason := unassigned(res, "orphan"); !strings.Contains(reason, `persistentvolumeclaim "data-not-created" of volume "data" does not exist yet`) {
			t.Errorf("orphan: reason %q, want that its claim does not exist yet", reason)
		}
	})

	t.Run("namespaceSelector affinity follows pods of the selected namespace", func(t *testing.T) {
		w.create(t, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: map[string]string{"team": "storage"}}})
		// A node in us-west-2b, tainted against the new pods, runs the cache pod.
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "storage-node", Labels: map[string]string{
				corev1.LabelTopologyZone: "us-west-2b", corev1.LabelHostname: "storage-node", corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "storage", Effect: corev1.TaintEffectNoSchedule}}},
		}
		w.create(t, node)
		node.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
		must(t, w.kube.Status().Update(ctx, node))
		w.synced(t, node)
		cache := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "data", Name: "cache", Labels: map[string]string{"app": "cache"}},
			Spec: corev1.PodSpec{NodeName: node.Name, Containers: []corev1.Container{{Name: "c", Image: "pause"}},
				Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}},
		}
		w.create(t, cache)
		cache.Status.Phase = corev1.PodRunning
		must(t, w.kube.Status().Update(ctx, cache))
		w.synced(t, cache)

		affinity := func(team string) *corev1.Affinity {
			return &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				TopologyKey:       corev1.LabelTopologyZone,
				LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": team}},
			}}}}
		}
		w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.PodSpec{Affinity: affinity("storage")}})
		w.pendingPod(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lost"}, Spec: corev1.PodSpec{Affinity: affinity("nobody")}})

		res := w.schedule(t)
		if len(res.Created) != 1 {
			t.Fatalf("created %d nodeclaims, want one for web; unassigned %q", len(res.Created), reasons(res))
		}
		if z := zonesOf(res.Created[0]); !slices.Equal(z, []string{"us-west-2b"}) {
			t.Errorf("claim zones %v, want the cache pod's us-west-2b (namespace data selected by its labels)", z)
		}
		if reason := unassigned(res, "lost"); !strings.Contains(reason, "affinity") {
			t.Errorf("lost: reason %q, want an affinity failure: no namespace has team=nobody", reason)
		}
	})
}
