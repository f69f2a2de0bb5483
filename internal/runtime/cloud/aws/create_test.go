package aws_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestCreateLaunchesTheCheapestSpotOfferingAndTagsIt(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("create-spot", cluster, "al2023@latest"))
	types := []string{"m5.large", "m5.xlarge", "c5.large", "c5.xlarge", "m6i.large", "r5.large"}
	claim := testenv.NodeClaim("create-spot-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, types...),
		testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand))
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })

	// The cheapest spot pool among the allowed types and the zones with subnets.
	cat := catalog.MustLoad()
	best, bestType, bestZone := math.Inf(1), "", ""
	for _, name := range types {
		for _, z := range sim.EC2.Region().Zones {
			if p, ok := cat.SpotPrice(sim.Config.Region, z.Name, name); ok && cat.Offered(sim.Config.Region, z.Name, name) && p < best {
				best, bestType, bestZone = p, name, z.Name
			}
		}
	}
	if got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeSpot {
		t.Errorf("capacity type = %s, want spot", got.Labels[v1.CapacityTypeLabelKey])
	}
	if got.Labels[corev1.LabelInstanceTypeStable] != bestType || got.Labels[corev1.LabelTopologyZone] != bestZone {
		t.Errorf("launched %s in %s, want the cheapest spot pool %s in %s ($%v)", got.Labels[corev1.LabelInstanceTypeStable], got.Labels[corev1.LabelTopologyZone], bestType, bestZone, best)
	}
	if !strings.HasPrefix(got.Status.ProviderID, "aws:///"+bestZone+"/i-") {
		t.Errorf("providerID = %s", got.Status.ProviderID)
	}
	if got.Status.ImageID != amd64Standard(t, nc.Status.AMIs) {
		t.Errorf("imageID = %s, want the amd64 standard AMI", got.Status.ImageID)
	}
	if got.Status.Allocatable.Cpu().IsZero() || got.Status.Capacity.Pods().IsZero() {
		t.Errorf("capacity/allocatable not hydrated: %v / %v", got.Status.Capacity, got.Status.Allocatable)
	}
	if got.Annotations[v1.EC2NodeClassHashAnnotationKey] != nc.Hash(prov.Settings().ClusterCABundle) {
		t.Errorf("node class hash annotation = %q, want %q", got.Annotations[v1.EC2NodeClassHashAnnotationKey], nc.Hash(prov.Settings().ClusterCABundle))
	}
	for _, k := range []string{v1.LabelInstanceFamily, corev1.LabelArchStable, v1.LabelTopologyZoneID, v1.LabelNodeClass} {
		if got.Labels[k] == "" {
			t.Errorf("label %s missing from the launched claim", k)
		}
	}

	id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := out.Reservations[0].Instances[0]
	tags := map[string]string{}
	for _, tag := range inst.Tags {
		tags[sdkaws.ToString(tag.Key)] = sdkaws.ToString(tag.Value)
	}
	for k, v := range map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster, v1.NodePoolLabelKey: "general",
		v1.LabelNodeClass: nc.Name, "karpenter.sh/nodeclaim": claim.Name, "team": "platform",
	} {
		if tags[k] != v {
			t.Errorf("instance tag %s = %q, want %q", k, tags[k], v)
		}
	}
	if inst.IamInstanceProfile == nil || !strings.Contains(sdkaws.ToString(inst.IamInstanceProfile.Arn), nc.Status.InstanceProfile) {
		t.Errorf("instance profile = %+v, want %s", inst.IamInstanceProfile, nc.Status.InstanceProfile)
	}
	if len(inst.SecurityGroups) != len(nc.Status.SecurityGroups) {
		t.Errorf("instance has %d security groups, node class resolved %d", len(inst.SecurityGroups), len(nc.Status.SecurityGroups))
	}
}

func TestCreateFallsBackAcrossPoolsThenToOnDemand(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("create-fallback", cluster, "al2023@latest"))
	const typ = "m5.2xlarge"
	zoneA, zoneB := sim.EC2.Region().Zones[0].Name, sim.EC2.Region().Zones[1].Name
	newClaim := func(name string) *v1.NodeClaim {
		return testenv.NodeClaim(name, "fallback", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, typ),
			testenv.In(corev1.LabelTopologyZone, zoneA, zoneB),
			testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot, v1.CapacityTypeOnDemand))
	}
	// Drain spot in zone A: the fleet must launch from zone B.
	if err := sim.EC2.SetCapacity(typ, zoneA, "spot", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, z := range []string{zoneA, zoneB} {
			for _, ct := range []string{"spot", "on-demand"} {
				_ = sim.EC2.SetCapacity(typ, z, ct, 1000)
				prov.UnavailableOfferings().Delete(typ, z, ct)
			}
		}
	})
	launch := func(name string) (*v1.NodeClaim, error) {
		got, err := prov.Create(ctx, newClaim(name))
		if err == nil {
			t.Cleanup(func() { _ = prov.Delete(ctx, got) })
		}
		return got, err
	}

	got, err := launch("fallback-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeSpot || got.Labels[corev1.LabelTopologyZone] != zoneB {
		t.Errorf("launched %s in %s, want spot in %s (the pool with capacity)", got.Labels[v1.CapacityTypeLabelKey], got.Labels[corev1.LabelTopologyZone], zoneB)
	}
	seq := prov.UnavailableOfferings().SeqNum()

	// Exhaust spot in zone B too: the launch fails and both spot pools are cached as unavailable.
	if err := sim.EC2.SetCapacity(typ, zoneB, "spot", 0); err != nil {
		t.Fatal(err)
	}
	_, err = launch("fallback-2")
	if !cloud.IsInsufficientCapacity(err) {
		t.Fatalf("err = %v, want InsufficientCapacityError", err)
	}
	for _, z := range []string{zoneA, zoneB} {
		if !prov.UnavailableOfferings().IsUnavailable(typ, z, "spot") {
			t.Errorf("spot %s in %s not marked unavailable", typ, z)
		}
	}
	if prov.UnavailableOfferings().SeqNum() == seq {
		t.Error("the unavailable-offerings sequence number did not move")
	}
	its, err := prov.GetInstanceTypes(ctx, pool("fallback", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range find(its, typ).Offerings {
		if o.CapacityType == "spot" && (o.Zone == zoneA || o.Zone == zoneB) && o.Available {
			t.Errorf("offering %+v still available", o)
		}
	}

	// The next pass falls back to on-demand.
	got, err = launch("fallback-3")
	if err != nil {
		t.Fatal(err)
	}
	if got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand {
		t.Errorf("capacity type = %s, want on-demand after spot ran out", got.Labels[v1.CapacityTypeLabelKey])
	}

	// With nothing left anywhere the claim gets InsufficientCapacityError.
	for _, z := range []string{zoneA, zoneB} {
		if err := sim.EC2.SetCapacity(typ, z, "on-demand", 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := launch("fallback-4"); !cloud.IsInsufficientCapacity(err) {
		t.Fatalf("err = %v, want InsufficientCapacityError", err)
	}
	if _, err := launch("fallback-5"); !cloud.IsInsufficientCapacity(err) {
		t.Fatalf("err = %v, want InsufficientCapacityError with every pool cached unavailable", err)
	}
}

func TestCreateNeedsAReadyNodeClass(t *testing.T) {
	ctx := testContext(t)
	_, err := prov.Create(ctx, testenv.NodeClaim("no-class", "general", "does-not-exist"))
	if !cloud.IsNodeClassNotReady(err) {
		t.Fatalf("err = %v, want NodeClassNotReadyError", err)
	}
}

func TestCreateRejectsImpossibleRequests(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("create-huge", cluster, "al2023@latest"))
	claim := testenv.NodeClaim("huge", "general", nc.Name, testenv.In(corev1.LabelInstanceTypeStable, "m5.large"))
	claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	if _, err := prov.Create(ctx, claim); !cloud.IsInsufficientCapacity(err) {
		t.Fatalf("3 CPUs on m5.large: err = %v, want InsufficientCapacityError", err)
	}
}

func TestDeleteGetListRoundTrip(t *testing.T) {
	ctx := testContext(t)
	nc, claim := launchC5(t, "roundtrip")
	got, err := prov.Get(ctx, claim.Status.ProviderID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "roundtrip-1" || got.Labels[v1.NodePoolLabelKey] != "general" || got.Labels[corev1.LabelInstanceTypeStable] != "c5.large" ||
		got.Labels[v1.CapacityTypeLabelKey] != v1.CapacityTypeOnDemand || got.Status.ImageID != claim.Status.ImageID ||
		got.Spec.NodeClassRef == nil || got.Spec.NodeClassRef.Name != nc.Name {
		t.Errorf("Get returned %+v / labels %v", got.ObjectMeta.Name, got.Labels)
	}
	if !listed(t, claim.Status.ProviderID) {
		t.Fatal("List does not include the launched instance")
	}
	if err := prov.Delete(ctx, claim); err != nil {
		t.Fatalf("first Delete: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := prov.Delete(ctx, claim)
		if cloud.IsNodeClaimNotFound(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("instance never finished terminating")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := prov.Get(ctx, claim.Status.ProviderID); !cloud.IsNodeClaimNotFound(err) {
		t.Errorf("Get after termination: %v, want NodeClaimNotFoundError", err)
	}
	if listed(t, claim.Status.ProviderID) {
		t.Error("List still includes the terminated instance")
	}
	if _, err := prov.Get(ctx, "aws:///us-west-2a/i-0000000000000dead"); !cloud.IsNodeClaimNotFound(err) {
		t.Errorf("Get of an unknown instance: %v, want NodeClaimNotFoundError", err)
	}
	var nf *cloud.NodeClaimNotFoundError
	if err := prov.Delete(ctx, &v1.NodeClaim{}); !errors.As(err, &nf) {
		t.Errorf("Delete of a claim never launched: %v, want NodeClaimNotFoundError", err)
	}
}

// A node's and its claim's finalizers delete the instance at the same
// time: together they make one TerminateInstances call, not one each.
func TestConcurrentDeletesTerminateOnce(t *testing.T) {
	ctx := testContext(t)
	_, claim := launchC5(t, "together")
	before := sim.Requests().Count("ec2", "TerminateInstances")
	var g errgroup.Group
	for range 4 {
		g.Go(func() error { return prov.Delete(ctx, claim) })
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := sim.Requests().Count("ec2", "TerminateInstances") - before; got != 1 {
		t.Errorf("4 concurrent Deletes made %d TerminateInstances calls, want 1", got)
	}
}

// launchC5 readies a node class named name and launches an on-demand
// c5.large for claim name-1 of pool general.
func launchC5(t *testing.T, name string) (*awsv1.EC2NodeClass, *v1.NodeClaim) {
	t.Helper()
	nc := readyNodeClass(t, prov, testenv.NodeClass(name, cluster, "al2023@latest"))
	claim, err := prov.Create(testContext(t), testenv.NodeClaim(name+"-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "c5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	return nc, claim
}

func listed(t *testing.T, providerID string) bool {
	t.Helper()
	claims, err := prov.List(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range claims {
		if c.Status.ProviderID == providerID {
			return true
		}
	}
	return false
}

// A role taken out of the node class's instance profile after the profile
// was resolved (the role deleted and created again under its name) is put
// back before the next launch: the launch reads the profile again rather
// than trusting the resolved status and launching an instance with no
// credentials, which would never join.
func TestCreatePutsBackARoleTakenOutOfItsInstanceProfile(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("create-roleless", cluster, "al2023@latest"))
	profile := nc.Status.InstanceProfile
	iamc := iam.NewFromConfig(sim.Config)
	if _, err := iamc.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{
		InstanceProfileName: sdkaws.String(profile), RoleName: sdkaws.String(testenv.NodeRole),
	}); err != nil {
		t.Fatal(err)
	}
	// The node class controller resolves again from its cache.
	resolve(t, prov, nc)
	before := len(sim.Requests().Requests("", ""))
	claim, err := prov.Create(ctx, testenv.NodeClaim("create-roleless-1", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "c5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(context.Background(), claim) })
	added, launched := -1, -1
	for i, r := range sim.Requests().Requests("", "")[before:] {
		switch {
		case r.Operation == "AddRoleToInstanceProfile" && r.Parameters["InstanceProfileName"] == profile && added < 0:
			added = i
		case r.Operation == "CreateFleet" && launched < 0:
			launched = i
		}
	}
	if added < 0 || launched < 0 || added > launched {
		t.Errorf("launched (request %d) into instance profile %s without putting role %s back first (request %d)", launched, profile, testenv.NodeRole, added)
	}
	got, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: sdkaws.String(profile)})
	if err != nil {
		t.Fatal(err)
	}
	if roles := got.InstanceProfile.Roles; len(roles) != 1 || sdkaws.ToString(roles[0].RoleName) != testenv.NodeRole {
		t.Errorf("instance profile %s holds %d roles after the launch, want %s", profile, len(roles), testenv.NodeRole)
	}
}
