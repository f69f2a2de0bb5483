package main

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	ksched "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/logging"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	kreq "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func init() { log.SetLogger(logging.NopLogger) }

type karpenter struct {
	nodePool      *v1.NodePool
	instanceTypes []*cloudprovider.InstanceType
}

// newKarpenter converts the fixture's types to Karpenter's: the labels and
// each offering's zone and capacity type as requirements, the capacity, and
// capacity minus allocatable as kubelet overhead, so both solvers see the
// same allocatable.
func newKarpenter(its []*scheduling.InstanceType) *karpenter {
	k := &karpenter{nodePool: test.NodePool(v1.NodePool{Spec: v1.NodePoolSpec{
		Limits: v1.Limits{corev1.ResourceCPU: resource.MustParse("10000000"), corev1.ResourceMemory: resource.MustParse("10000000Gi")},
		Template: v1.NodeClaimTemplate{Spec: v1.NodeClaimTemplateSpec{Requirements: []v1.NodeSelectorRequirementWithMinValues{{
			Key: v1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{v1.CapacityTypeOnDemand}}}}},
	}})}
	for _, it := range its {
		k.instanceTypes = append(k.instanceTypes, karpenterType(it))
	}
	return k
}

func karpenterType(it *scheduling.InstanceType) *cloudprovider.InstanceType {
	zones, capacityTypes := map[string]bool{}, map[string]bool{}
	var offerings cloudprovider.Offerings
	for _, o := range it.Offerings {
		zones[o.Zone], capacityTypes[o.CapacityType] = true, true
		offerings = append(offerings, &cloudprovider.Offering{
			Requirements: kreq.NewLabelRequirements(map[string]string{corev1.LabelTopologyZone: o.Zone, v1.CapacityTypeLabelKey: o.CapacityType}),
			Price:        o.Price, Available: o.Available,
		})
	}
	reqs := kreq.NewLabelRequirements(it.Labels)
	reqs.Add(kreq.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, keys(zones)...))
	reqs.Add(kreq.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, keys(capacityTypes)...))
	overhead := corev1.ResourceList{}
	for name, c := range it.Capacity {
		if a, ok := it.Allocatable[name]; ok {
			c = c.DeepCopy()
			c.Sub(a)
			overhead[name] = c
		}
	}
	return &cloudprovider.InstanceType{
		Name: it.Name, Requirements: reqs, Offerings: offerings, Capacity: it.Capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{KubeReserved: overhead},
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// solve builds a scheduler as Karpenter's benchmark does and times its
// Solve alone.
func (k *karpenter) solve(ctx context.Context, pods []*corev1.Pod) (result, error) {
	ctx = options.ToContext(injection.WithControllerName(ctx, "provisioner"), test.Options())
	clk := &clock.RealClock{}
	client := fakecr.NewFakeClient()
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = k.instanceTypes
	cluster := state.NewCluster(clk, client, cp)
	byPool := map[string][]*cloudprovider.InstanceType{k.nodePool.Name: k.instanceTypes}
	topology, err := ksched.NewTopology(ctx, client, cluster, nil, []*v1.NodePool{k.nodePool}, byPool, pods, ksched.NumConcurrentReconciles(5))
	if err != nil {
		return result{}, err
	}
	s := ksched.NewScheduler(ctx, client, []*v1.NodePool{k.nodePool}, cluster, nil, topology, byPool, nil,
		events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil, ksched.NumConcurrentReconciles(5))
	var res ksched.Results
	wall, cpu := timed(func() { res, err = s.Solve(ctx, pods) })
	if err != nil {
		return result{}, err
	}
	r := result{wall: wall, cpu: cpu, nodes: len(res.NewNodeClaims), failed: len(res.PodErrors)}
	for pod, err := range res.PodErrors {
		r.sample = fmt.Sprintf("%s: %v", pod.Name, err)
		break
	}
	for _, nc := range res.NewNodeClaims {
		price, err := cheapest(nc)
		if err != nil {
			return result{}, err
		}
		r.cost += price
	}
	return r, nil
}

// cheapest is the price of the cheapest offering a NodeClaim may launch:
// an on-demand launch takes the lowest price among its options.
func cheapest(nc *ksched.NodeClaim) (float64, error) {
	best := math.Inf(1)
	for _, it := range nc.InstanceTypeOptions {
		if ofs := it.Offerings.Available().Compatible(nc.Requirements); len(ofs) > 0 {
			best = math.Min(best, ofs.Cheapest().Price)
		}
	}
	if math.IsInf(best, 1) {
		return 0, fmt.Errorf("a NodeClaim has no compatible offering")
	}
	return best, nil
}
