package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

var (
	spotAndOnDemand = req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand)
	amd64           = req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, v1.ArchitectureAmd64)
	categoriesCMR   = req(v1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "r")
)

// class is the EC2NodeClass of the provisioning scenarios.
const class = "provisioning"

// testProvisioning runs the independent scenarios in parallel on the shared
// world, then the one that restarts the controller on its own.
func testProvisioning(t *testing.T) {
	nodeClass(t, class)
	t.Run("independent", func(t *testing.T) {
		t.Run("deployment", testDeployment)
		t.Run("spot-capacity-removed", testSpotCapacityRemoved)
		t.Run("gpu", testGPU)
		t.Run("zonal-spread", testZonalSpread)
		t.Run("unservable", testUnservable)
		t.Run("limits", testLimits)
		t.Run("windows", testWindows)
	})
	t.Run("controller-restart", testControllerRestart)
}

// testDeployment: 50 pods of 1 CPU / 1.5Gi on a spot+on-demand c/m/r pool.
func testDeployment(t *testing.T) {
	t.Parallel()
	const replicas = 50
	ns := namespace(t, "e2e-deployment")
	nodePool(t, "deployment", class, nil, spotAndOnDemand, amd64, categoriesCMR)
	start := time.Now()
	create(t, deployment(ns, "pause", replicas, podSpec("deployment", requests("1", "1.5Gi"))))
	eventually(t, "all pods Running", func() (bool, string) {
		n, waiting := running(pods(t, ns, map[string]string{"app": "pause"}))
		return n == replicas, fmt.Sprintf("%d/%d running; %s", n, replicas, waiting)
	})
	elapsed := time.Since(start)
	t.Logf("deployment of %d pods: all Running %s after creation", replicas, elapsed.Round(10*time.Millisecond))

	claims := claimsOf(t, "deployment")
	nodes := nodesOf(t, "deployment")
	insts := instances(t, "deployment")
	if len(claims) != len(nodes) || len(claims) != len(insts) {
		t.Fatalf("%d nodeclaims, %d nodes, %d instances: want one of each per node", len(claims), len(nodes), len(insts))
	}
	byProvider := map[string]*corev1.Node{}
	for i := range nodes {
		byProvider[nodes[i].Spec.ProviderID] = &nodes[i]
	}
	podsOn := map[string]int{}
	for _, p := range pods(t, ns, map[string]string{"app": "pause"}) {
		podsOn[p.Spec.NodeName]++
	}
	lb, lbType := spotLowerBound(t, []string{"c", "m", "r"}, "amd64", 1, 1.5)
	var cost float64
	for _, c := range claims {
		if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeReady) {
			t.Errorf("nodeclaim %s not Ready: %v", c.Name, c.Status.Conditions)
		}
		node := byProvider[c.Status.ProviderID]
		if node == nil || node.Name != c.Status.NodeName {
			t.Errorf("nodeclaim %s (%s) has no node of its own", c.Name, c.Status.ProviderID)
			continue
		}
		if !state.IsNodeReady(node) || node.Labels[v1.NodeInitializedLabelKey] != "true" || node.Labels[v1.NodeRegisteredLabelKey] != "true" {
			t.Errorf("node %s not ready/registered/initialized: labels %v", node.Name, node.Labels)
		}
		if hasOwner(node, c.Name) == false {
			t.Errorf("node %s has no owner reference to nodeclaim %s", node.Name, c.Name)
		}
		// Events of cluster-scoped objects are recorded in "default".
		for _, step := range []string{v1.ConditionTypeLaunched, v1.ConditionTypeRegistered, v1.ConditionTypeInitialized} {
			if len(runtimeEvents(t, metav1.NamespaceDefault, c.Name, step)) == 0 {
				t.Errorf("nodeclaim %s has no %s event", c.Name, step)
			}
		}
		if ct := c.Labels[v1.CapacityTypeLabelKey]; ct != v1.CapacityTypeSpot {
			t.Errorf("nodeclaim %s launched %s, want spot (cheaper and allowed)", c.Name, ct)
		}
		inst, ok := insts[c.Status.ProviderID]
		if !ok {
			t.Errorf("nodeclaim %s: instance %s not found", c.Name, c.Status.ProviderID)
			continue
		}
		tags := tagsOf(inst)
		for k, want := range map[string]string{
			"eks:eks-cluster-name": clusterName, "kubernetes.io/cluster/" + clusterName: "owned",
			v1.NodePoolLabelKey: "deployment", v1.LabelNodeClass: class, "karpenter.sh/nodeclaim": c.Name,
		} {
			if tags[k] != want {
				t.Errorf("instance %s tag %s=%q, want %q", aws.ToString(inst.InstanceId), k, tags[k], want)
			}
		}
		price, _ := catalogSpotPrice(t, string(inst.InstanceType), aws.ToString(inst.Placement.AvailabilityZone))
		cost += price
		t.Logf("node %s: %s %s in %s, %d pods, $%.4f/h", node.Name, inst.InstanceType, c.Labels[v1.CapacityTypeLabelKey],
			aws.ToString(inst.Placement.AvailabilityZone), podsOn[node.Name], price)
	}
	for series, want := range map[string]float64{
		`karpenter_nodeclaims_created_total{min_values_relaxed="false",nodepool="deployment",reason="provisioned"}`: float64(len(claims)),
		`joist_nodeclaims_launched_total{nodepool="deployment"}`:                                                    float64(len(claims)),
		`joist_nodeclaims_registered_total{nodepool="deployment"}`:                                                  float64(len(claims)),
		`joist_nodeclaims_initialized_total{nodepool="deployment"}`:                                                 float64(len(claims)),
	} {
		got, ok, err := w.controller.metric(series)
		if err != nil || !ok || got != want {
			t.Errorf("metric %s = %v (present %v, err %v), want %v", series, got, ok, err, want)
		}
	}
	bound := lb * replicas
	t.Logf("cost $%.4f/h for %d pods on %d nodes; overhead-free lower bound $%.4f/h (%s): ratio %.2f",
		cost, replicas, len(claims), bound, lbType, cost/bound)
	// Every machine loses some CPU and memory to the kubelet and the OS, so
	// no real packing reaches the bound; well-chosen cheap types stay
	// within 1.75x of it.
	if cost > 1.75*bound {
		t.Errorf("cost $%.4f/h is %.2fx the lower bound $%.4f/h: the chosen types are not among the cheapest that fit", cost, cost/bound, bound)
	}
}

func catalogSpotPrice(t testing.TB, instanceType, zone string) (float64, bool) {
	return catalogLoad().SpotPrice(region(t).Name, zone, instanceType)
}

func hasOwner(n *corev1.Node, claim string) bool {
	for _, o := range n.OwnerReferences {
		if o.Kind == "NodeClaim" && o.Name == claim {
			return true
		}
	}
	return false
}

// testSpotCapacityRemoved: after the spot pools of the pool's families run
// dry, new pods still land, on on-demand capacity.
func testSpotCapacityRemoved(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-spot")
	families := req(v1.LabelInstanceFamily, corev1.NodeSelectorOpIn, "t3", "t3a")
	nodePool(t, "spot", class, nil, spotAndOnDemand, amd64, families)
	d := deployment(ns, "pause", 3, podSpec("spot", requests("1", "1Gi")))
	create(t, d)
	waitRunning(t, ns, 3)
	before := map[string]bool{}
	for _, c := range claimsOf(t, "spot") {
		before[c.Name] = true
		if c.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeSpot {
			t.Errorf("before the removal, nodeclaim %s launched %s, want spot", c.Name, c.Labels[v1.CapacityTypeLabelKey])
		}
	}
	removed := 0
	for _, it := range familyTypes("t3", "t3a") {
		for _, z := range region(t).Zones {
			if err := w.sim.EC2.SetCapacity(it, z.Name, "spot", 0); err == nil {
				removed++
			}
		}
	}
	t.Logf("removed spot capacity from %d (type, zone) pools", removed)
	scale(t, d, 9)
	waitRunning(t, ns, 9)
	var after []string
	for _, c := range claimsOf(t, "spot") {
		if before[c.Name] {
			continue
		}
		after = append(after, c.Name)
		if ct := c.Labels[v1.CapacityTypeLabelKey]; ct != v1.CapacityTypeOnDemand {
			t.Errorf("after the removal, nodeclaim %s launched %s, want on-demand", c.Name, ct)
		}
	}
	if len(after) == 0 {
		t.Error("no new nodeclaim launched for the new pods")
	}
	t.Logf("new nodeclaims after the removal: %v", after)
}

func scale(t *testing.T, d *appsv1.Deployment, replicas int32) {
	t.Helper()
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = &replicas
	if err := worldOf(t).kube.Patch(context.Background(), d, patch); err != nil {
		t.Fatalf("scaling %s: %v", d.Name, err)
	}
}

func waitRunning(t *testing.T, ns string, want int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pods Running in %s", want, ns), func() (bool, string) {
		n, waiting := running(pods(t, ns, map[string]string{"app": "pause"}))
		return n == want, fmt.Sprintf("%d/%d running; %s", n, want, waiting)
	})
}

// testGPU: a pod requesting a GPU gets a GPU instance type.
func testGPU(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-gpu")
	nodePool(t, "gpu", class, nil, spotAndOnDemand, amd64,
		req(v1.LabelInstanceCategory, corev1.NodeSelectorOpIn, "c", "m", "g", "p"))
	spec := podSpec("gpu", requests("1", "1Gi"))
	spec.Containers[0].Resources.Requests["nvidia.com/gpu"] = resource.MustParse("1")
	spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	create(t, deployment(ns, "pause", 1, spec))
	waitRunning(t, ns, 1)
	claims := claimsOf(t, "gpu")
	if len(claims) != 1 {
		t.Fatalf("%d nodeclaims, want 1", len(claims))
	}
	c := claims[0]
	gpus := c.Labels[v1.LabelInstanceGPUCount]
	if gpus == "" || gpus == "0" {
		t.Errorf("nodeclaim %s launched %s (gpu count %q), want a GPU type", c.Name, c.Labels[corev1.LabelInstanceTypeStable], gpus)
	}
	t.Logf("GPU pod runs on %s (%s x%s)", c.Labels[corev1.LabelInstanceTypeStable], c.Labels[v1.LabelInstanceGPUName], gpus)
}

// testZonalSpread: a zonal topology spread over a pool limited to 3 zones
// gets all 3 zones, evenly.
func testZonalSpread(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-spread")
	zones := region(t).Zones
	if len(zones) < 3 {
		t.Fatalf("region %s has %d zones, the scenario needs 3", region(t).Name, len(zones))
	}
	three := req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones[0].Name, zones[1].Name, zones[2].Name)
	nodePool(t, "spread", class, nil, spotAndOnDemand, amd64, categoriesCMR, three)
	spec := podSpec("spread", requests("1", "1Gi"))
	spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pause"}},
	}}
	create(t, deployment(ns, "pause", 6, spec))
	waitRunning(t, ns, 6)
	nodeZone := map[string]string{}
	for _, n := range nodesOf(t, "spread") {
		nodeZone[n.Name] = n.Labels[corev1.LabelTopologyZone]
	}
	perZone := map[string]int{}
	for _, p := range pods(t, ns, map[string]string{"app": "pause"}) {
		perZone[nodeZone[p.Spec.NodeName]]++
	}
	if len(perZone) != 3 {
		t.Errorf("pods in zones %v, want 3 zones", perZone)
	}
	for z, n := range perZone {
		if n != 2 {
			t.Errorf("zone %s runs %d pods, want 2 (max skew 1 over 6 pods)", z, n)
		}
	}
	t.Logf("pods per zone: %v", perZone)
}

// testUnservable: a pod no NodePool can serve gets a FailedScheduling event
// that says why.
func testUnservable(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-unservable")
	nodePool(t, "unservable", class, nil, spotAndOnDemand, amd64, categoriesCMR)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "huge"},
		Spec:       podSpec("unservable", requests("2000", "1Gi")),
	}
	create(t, pod)
	var msg string
	eventually(t, "FailedScheduling event from the runtime", func() (bool, string) {
		evs := runtimeEvents(t, ns, "huge", "FailedScheduling")
		if len(evs) == 0 {
			return false, "no event yet"
		}
		msg = evs[0].Note
		return true, ""
	})
	t.Logf("FailedScheduling: %s", msg)
	if !strings.Contains(msg, "instance type") || !strings.Contains(msg, "cpu") {
		t.Errorf("event %q does not say that no instance type has room for the cpu request", msg)
	}
	if n := len(claimsOf(t, "unservable")); n != 0 {
		t.Errorf("%d nodeclaims created for an unservable pod", n)
	}
}

// testLimits: limits.cpu 20 stops provisioning at the limit; the rest stays
// pending with a reason.
func testLimits(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "e2e-limits")
	nodePool(t, "limits", class, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("20")},
		spotAndOnDemand, amd64, categoriesCMR)
	create(t, deployment(ns, "pause", 30, podSpec("limits", requests("1", "1.5Gi"))))
	var pending []corev1.Pod
	eventually(t, "provisioning stops at the limit with pending pods told why", func() (bool, string) {
		ps := pods(t, ns, map[string]string{"app": "pause"})
		n, _ := running(ps)
		pending = pending[:0]
		for _, p := range ps {
			if p.Status.Phase == corev1.PodPending {
				pending = append(pending, p)
			}
		}
		claims := claimsOf(t, "limits")
		for _, c := range claims {
			if !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeReady) {
				return false, fmt.Sprintf("nodeclaim %s not ready yet", c.Name)
			}
		}
		if n == 0 || len(pending) == 0 {
			return false, fmt.Sprintf("%d running, %d pending", n, len(pending))
		}
		for _, p := range pending {
			for _, e := range runtimeEvents(t, ns, p.Name, "FailedScheduling") {
				if strings.Contains(e.Note, "limit") {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d running, %d pending, no FailedScheduling naming the limit yet", n, len(pending))
	})
	var cpu resource.Quantity
	for _, c := range claimsOf(t, "limits") {
		q := c.Status.Capacity[corev1.ResourceCPU]
		cpu.Add(q)
	}
	if cpu.Cmp(resource.MustParse("20")) > 0 {
		t.Errorf("nodeclaims of the pool have %s CPUs, over the limit of 20", cpu.String())
	}
	pool := &v1.NodePool{}
	if err := w.kube.Get(context.Background(), client.ObjectKey{Name: "limits"}, pool); err != nil {
		t.Fatal(err)
	}
	t.Logf("pool at %s CPUs (status %v); %d pods pending", cpu.String(), pool.Status.Resources, len(pending))
}

// testControllerRestart: the controller is killed while launching and an
// instance it launched but never recorded is left behind; after a restart
// no orphan instance or NodeClaim survives and the pods run.
func testControllerRestart(t *testing.T) {
	ns := namespace(t, "e2e-restart")
	nodePool(t, "restart", class, nil, spotAndOnDemand, amd64, categoriesCMR)
	// EC2 completes every CreateFleet but holds the answer, so the
	// controller is killed inside a launch whose instance already exists.
	held, err := w.sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "CreateFleet", Kind: fault.ResponseLatency, Latency: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	create(t, deployment(ns, "pause", 8, podSpec("restart", requests("1", "1.5Gi"))))
	var inFlight []string
	eventually(t, "an instance launched by a CreateFleet still in flight", func() (bool, string) {
		for id := range instances(t, "restart") {
			inFlight = append(inFlight, id)
		}
		return len(inFlight) > 0, "no instance yet"
	})
	for _, c := range claimsOf(t, "restart") {
		if c.Status.ProviderID != "" {
			t.Fatalf("nodeclaim %s learned its instance %s: the launch was not in flight", c.Name, c.Status.ProviderID)
		}
	}
	killed, err := w.controller.kill()
	if err != nil {
		t.Fatal(err)
	}
	w.sim.Faults().Remove(held.ID)
	t.Logf("controller killed with SIGKILL inside CreateFleet; instances launched by the abandoned call: %v", inFlight)
	ctx := context.Background()
	if _, err := w.controller.waitLeader(ctx, killed.PID); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	waitRunning(t, ns, 8)
	noLeakedCapacity(t, "")
	t.Logf("after the restart: pods running and no orphans %s later", time.Since(restarted).Round(time.Second))
}
