package aws_test

import (
	"context"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
)

// runTagged launches one on-demand instance outside the runtime, tagged
// as given, and returns its ID and provider ID.
func runTagged(t *testing.T, tags map[string]string) (id, providerID string) {
	t.Helper()
	ctx := testContext(t)
	spec := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeInstance}
	for k, v := range tags {
		spec.Tags = append(spec.Tags, ec2types.Tag{Key: sdkaws.String(k), Value: sdkaws.String(v)})
	}
	n := sim.EC2.Network()
	out, err := ec2.NewFromConfig(sim.Config).RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: sdkaws.String(sim.EC2.Images()[0].ImageID), InstanceType: ec2types.InstanceTypeM5Large,
		MinCount: sdkaws.Int32(1), MaxCount: sdkaws.Int32(1), SubnetId: sdkaws.String(n.PrivateSubnetIDs[0]),
		TagSpecifications: []ec2types.TagSpecification{spec},
	})
	if err != nil {
		t.Fatal(err)
	}
	i := out.Instances[0]
	return sdkaws.ToString(i.InstanceId), "aws:///" + sdkaws.ToString(i.Placement.AvailabilityZone) + "/" + sdkaws.ToString(i.InstanceId)
}

func ownedTags(cluster, pool string) map[string]string {
	return map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
		v1.NodePoolLabelKey: pool, v1.LabelNodeClass: "default",
	}
}

func instanceState(t *testing.T, id string) ec2types.InstanceStateName {
	t.Helper()
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(testContext(t), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Reservations[0].Instances[0].State.Name
}

func waitState(t *testing.T, id string, want ec2types.InstanceStateName) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for instanceState(t, id) != want {
		if time.Now().After(deadline) {
			t.Fatalf("instance %s is %s, want %s", id, instanceState(t, id), want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestListShowsStoppedInstancesAsLiveAndOnlyThisClustersInstances: a
// stopped instance is listed without a deletion mark (garbage collection
// must see it), and another cluster's instance with the same pool name is
// not listed at all.
func TestListShowsStoppedInstancesAsLiveAndOnlyThisClustersInstances(t *testing.T) {
	ctx := testContext(t)
	stopped, stoppedPID := runTagged(t, ownedTags(cluster, "list-pool"))
	_, foreignPID := runTagged(t, ownedTags("other-cluster", "list-pool"))
	untagged, untaggedPID := runTagged(t, map[string]string{"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster})
	t.Cleanup(func() {
		_, _ = ec2.NewFromConfig(sim.Config).TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: []string{untagged}})
	})
	waitState(t, stopped, ec2types.InstanceStateNameRunning)
	if _, err := ec2.NewFromConfig(sim.Config).StopInstances(ctx, &ec2.StopInstancesInput{InstanceIds: []string{stopped}}); err != nil {
		t.Fatal(err)
	}
	waitState(t, stopped, ec2types.InstanceStateNameStopped)

	list, err := prov.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]*v1.NodeClaim{}
	for _, c := range list {
		seen[c.Status.ProviderID] = c
	}
	if c := seen[stoppedPID]; c == nil || c.DeletionTimestamp != nil {
		t.Errorf("the stopped instance is listed as %+v, want live (no deletion mark)", c)
	}
	if seen[foreignPID] != nil {
		t.Error("another cluster's instance is listed")
	}
	if seen[untaggedPID] != nil {
		t.Error("an instance without NodePool and EC2NodeClass tags is listed")
	}
	if err := prov.Delete(ctx, seen[stoppedPID]); err != nil {
		t.Fatal(err)
	}
	waitState(t, stopped, ec2types.InstanceStateNameTerminated)
}

// TestDeleteLeavesInstancesThisClusterDoesNotOwn: a claim whose provider ID
// names another cluster's instance, or one without the runtime's tags,
// terminates nothing; for this cluster the instance does not exist.
func TestDeleteLeavesInstancesThisClusterDoesNotOwn(t *testing.T) {
	ctx := testContext(t)
	foreign, foreignPID := runTagged(t, ownedTags("other-cluster", "same-pool"))
	bare, barePID := runTagged(t, map[string]string{"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster})
	t.Cleanup(func() {
		_, _ = ec2.NewFromConfig(sim.Config).TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: []string{foreign, bare}})
	})
	for id, pid := range map[string]string{foreign: foreignPID, bare: barePID} {
		claim := &v1.NodeClaim{}
		claim.Name = "not-ours"
		claim.Status.ProviderID = pid
		err := prov.Delete(ctx, claim)
		if !cloud.IsNodeClaimNotFound(err) {
			t.Errorf("deleting %s: %v, want NodeClaimNotFound", id, err)
		}
		if _, ok := cloud.AsUnmanagedInstance(err); ok {
			t.Errorf("deleting %s: %v; an instance without this cluster's NodePool marks is not reported as unmanaged", id, err)
		}
	}
	for _, r := range sim.Requests().Requests("ec2", "TerminateInstances") {
		for _, v := range r.Parameters {
			if v == foreign || v == bare {
				t.Errorf("TerminateInstances was called on %v, an instance the cluster does not own", v)
			}
		}
	}
	for _, id := range []string{foreign, bare} {
		if s := instanceState(t, id); s != ec2types.InstanceStateNamePending && s != ec2types.InstanceStateNameRunning {
			t.Errorf("instance %s not owned by the cluster is %s", id, s)
		}
	}
}
