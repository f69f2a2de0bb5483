package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

var onDemand = req(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeOnDemand)

// consolidatingPool creates an on-demand c/m/r NodePool that consolidates
// after consolidateAfter, then applies mutate before creating it.
func consolidatingPool(t *testing.T, name, consolidateAfter string, mutate func(*v1.NodePool)) *v1.NodePool {
	t.Helper()
	np := &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{
			Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: "EC2NodeClass", Name: "default"},
				Requirements: v1.Requirements{req(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux"), onDemand, amd64, categoriesCMR},
				ExpireAfter:  v1.MustParseNillableDuration("720h"),
			}},
			Disruption: v1.Disruption{
				ConsolidateAfter:    v1.MustParseNillableDuration(consolidateAfter),
				ConsolidationPolicy: v1.ConsolidationPolicyWhenEmptyOrUnderutilized,
				Budgets:             []v1.Budget{{Nodes: "100%"}},
			},
		},
	}
	if mutate != nil {
		mutate(np)
	}
	create(t, np)
	// Later scenarios should not see this pool: its deletion cascades to
	// its nodeclaims.
	t.Cleanup(func() { _ = worldOf(t).kube.Delete(context.Background(), np) })
	eventually(t, "NodePool "+name+" Ready", func() (bool, string) {
		got := &v1.NodePool{}
		if err := worldOf(t).kube.Get(context.Background(), client.ObjectKey{Name: name}, got); err != nil {
			return false, err.Error()
		}
		return meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady), "not Ready"
	})
	return np
}

// poolCost is the hourly price of the pool's live instances.
func poolCost(t *testing.T, pool string) (float64, int) {
	t.Helper()
	var cost float64
	insts := instances(t, pool)
	for _, inst := range insts {
		price, ok := catalogLoad().OnDemandPrice(region(t).Name, string(inst.InstanceType))
		if inst.InstanceLifecycle == "spot" {
			price, ok = catalogSpotPrice(t, string(inst.InstanceType), aws.ToString(inst.Placement.AvailabilityZone))
		}
		if !ok {
			t.Fatalf("no price for %s", inst.InstanceType)
		}
		cost += price
	}
	return cost, len(insts)
}

// instanceIDs are the pool's live instance IDs.
func instanceIDs(t *testing.T, pool string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, inst := range instances(t, pool) {
		out[aws.ToString(inst.InstanceId)] = true
	}
	return out
}

// expectTerminatedInstances checks each instance is shutting down or gone.
func expectTerminatedInstances(t *testing.T, ids []string) {
	t.Helper()
	if len(ids) == 0 {
		return
	}
	out, err := ec2.NewFromConfig(worldOf(t).sim.AWSConfig()).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		t.Fatalf("DescribeInstances: %v", err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if s := string(i.State.Name); s != "shutting-down" && s != "terminated" {
				t.Errorf("instance %s of a removed node is %s", aws.ToString(i.InstanceId), s)
			}
		}
	}
}

// disrupting counts the pool's nodes that are tainted for disruption or
// being deleted, as budgets count them: a node whose instance is already
// terminating no longer counts.
func disrupting(t *testing.T, pool string) int {
	t.Helper()
	terminating := map[string]bool{}
	for _, c := range claimsOf(t, pool) {
		if meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInstanceTerminating) {
			terminating[c.Status.ProviderID] = true
		}
	}
	n := 0
	for _, node := range nodesOf(t, pool) {
		if terminating[node.Spec.ProviderID] {
			continue
		}
		if node.DeletionTimestamp != nil {
			n++
			continue
		}
		for _, taint := range node.Spec.Taints {
			if taint.Key == v1.DisruptedTaintKey {
				n++
				break
			}
		}
	}
	return n
}

// observe runs probe every interval in the background until stop is
// called (any number of times).
func observe(interval time.Duration, probe func()) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-time.After(interval):
				probe()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done); <-finished }) }
}

func hostnameAntiAffinity(spec *corev1.PodSpec, app string) {
	spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:   corev1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}},
	}}
}

// scenarioNamespace is namespace() that is deleted with its pods when the
// scenario ends.
func scenarioNamespace(t *testing.T, name string) string {
	ns := namespace(t, name)
	t.Cleanup(func() {
		_ = worldOf(t).kube.Delete(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	})
	return ns
}
