package tagging_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/tagging"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// launch runs one instance outside the runtime with the tags a launch for
// claim in owner's cluster puts on it (plus extra), and returns its ID and
// provider ID.
func launch(t *testing.T, owner, claim string, extra map[string]string) (id, providerID string) {
	t.Helper()
	tags := map[string]string{
		"kubernetes.io/cluster/" + owner: "owned", "eks:eks-cluster-name": owner,
		v1.NodePoolLabelKey: "default", v1.LabelNodeClass: "default", "karpenter.sh/nodeclaim": claim,
	}
	for k, v := range extra {
		tags[k] = v
	}
	spec := ec2types.TagSpecification{ResourceType: ec2types.ResourceTypeInstance}
	for k, v := range tags {
		spec.Tags = append(spec.Tags, ec2types.Tag{Key: sdkaws.String(k), Value: sdkaws.String(v)})
	}
	ec2c := ec2.NewFromConfig(sim.Config)
	out, err := ec2c.RunInstances(testContext(t), &ec2.RunInstancesInput{
		ImageId: sdkaws.String(sim.EC2.Images()[0].ImageID), InstanceType: ec2types.InstanceTypeM5Large,
		MinCount: sdkaws.Int32(1), MaxCount: sdkaws.Int32(1), SubnetId: sdkaws.String(sim.EC2.Network().PrivateSubnetIDs[0]),
		TagSpecifications: []ec2types.TagSpecification{spec},
	})
	if err != nil {
		t.Fatal(err)
	}
	i := out.Instances[0]
	id = sdkaws.ToString(i.InstanceId)
	t.Cleanup(func() {
		_, _ = ec2c.TerminateInstances(context.Background(), &ec2.TerminateInstancesInput{InstanceIds: []string{id}})
	})
	return id, "aws:///" + sdkaws.ToString(i.Placement.AvailabilityZone) + "/" + id
}

// registered creates a claim whose node registered: the node's name, the
// provider ID and the Registered condition, as the lifecycle controller
// leaves it; annotations are set on creation.
func registered(t *testing.T, name, providerID string, annotations map[string]string) *v1.NodeClaim {
	t.Helper()
	ctx := testContext(t)
	claim := testenv.NodeClaim(name, "default", "default", testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Annotations = annotations
	if err := kube.Client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), claim) })
	claim.Status.ProviderID, claim.Status.NodeName = providerID, "ip-10-0-0-"+name
	nodeclaim.Set(claim, v1.ConditionTypeRegistered, metav1.ConditionTrue, v1.ConditionTypeRegistered, "")
	if err := kube.Client.Status().Update(ctx, claim); err != nil {
		t.Fatal(err)
	}
	return claim
}

func instanceTags(t *testing.T, id string) map[string]string {
	t.Helper()
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(testContext(t), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, tag := range out.Reservations[0].Instances[0].Tags {
		tags[sdkaws.ToString(tag.Key)] = sdkaws.ToString(tag.Value)
	}
	return tags
}

// createTags are the recorded CreateTags calls naming the instance.
func createTags(id string) []awssim.Request {
	var out []awssim.Request
	for _, r := range sim.Requests().Requests("ec2", "CreateTags") {
		if strings.Contains(fmt.Sprint(r.Parameters), id) {
			out = append(out, r)
		}
	}
	return out
}

func annotated(t *testing.T, claim *v1.NodeClaim) func() error {
	return func() error {
		got := &v1.NodeClaim{}
		if err := kube.Client.Get(testContext(t), client.ObjectKeyFromObject(claim), got); err != nil {
			return err
		}
		if got.Annotations[v1.TaggedAnnotationKey] != "true" || got.Annotations[v1.ClusterNameTaggedAnnotationKey] != "true" {
			return fmt.Errorf("NodeClaim %s has annotations %v, want %s and %s \"true\"", claim.Name, got.Annotations, v1.TaggedAnnotationKey, v1.ClusterNameTaggedAnnotationKey)
		}
		return nil
	}
}

// reconcile runs one reconcile of claim, outside the manager, and returns
// the claim as it is after it.
func reconcileOnce(t *testing.T, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	t.Helper()
	ctx := testContext(t)
	_, err := tagging.NewController(kube.Client, prov, events.NewRecorder(nil)).Reconcile(ctx, reconcile.Request{NamespacedName: types.NamespacedName{Name: claim.Name}})
	got := &v1.NodeClaim{}
	if gerr := kube.Client.Get(ctx, client.ObjectKeyFromObject(claim), got); gerr != nil {
		t.Fatal(gerr)
	}
	return got, err
}

// A registered claim's instance gets the node's name as its Name tag and
// the claim both annotations. The launch's tags (karpenter.sh/nodeclaim,
// eks:eks-cluster-name) are not written again.
func TestRegisteredClaimsInstanceIsNamedAfterItsNode(t *testing.T) {
	ctx := testContext(t)
	id, pid := launch(t, cluster, "named", nil)
	claim := registered(t, "named", pid, nil)
	testenv.Eventually(t, ctx, "the claim is annotated", annotated(t, claim))
	if got := instanceTags(t, id)["Name"]; got != claim.Status.NodeName {
		t.Errorf("instance Name tag %q, want the node's name %q", got, claim.Status.NodeName)
	}
	calls := createTags(id)
	if len(calls) != 1 {
		t.Fatalf("%d CreateTags calls on the instance, want 1", len(calls))
	}
	if p := fmt.Sprint(calls[0].Parameters); strings.Contains(p, "karpenter.sh/nodeclaim") || strings.Contains(p, "eks:eks-cluster-name") {
		t.Errorf("CreateTags wrote the launch's tags again: %s", p)
	}
}

// A Name the instance already has (from the EC2NodeClass's tags) is kept:
// the claim is annotated and nothing is written.
func TestNameFromTheNodeClassIsKept(t *testing.T) {
	ctx := testContext(t)
	id, pid := launch(t, cluster, "custom", map[string]string{"Name": "team-build"})
	claim := registered(t, "custom", pid, nil)
	testenv.Eventually(t, ctx, "the claim is annotated", annotated(t, claim))
	if got := instanceTags(t, id)["Name"]; got != "team-build" {
		t.Errorf("instance Name tag %q, want the node class's %q", got, "team-build")
	}
	if calls := createTags(id); len(calls) != 0 {
		t.Errorf("%d CreateTags calls on an instance with every tag, want none: %v", len(calls), calls[0].Parameters)
	}
}

// A claim whose provider ID names another cluster's instance tags nothing
// and stays unannotated.
func TestInstanceOfAnotherClusterIsNotTagged(t *testing.T) {
	id, pid := launch(t, "other-cluster", "foreign", nil)
	claim := registered(t, "foreign", pid, nil)
	got, err := reconcileOnce(t, claim)
	if err != nil {
		t.Fatalf("reconcile: %v, want nil (nothing to retry)", err)
	}
	if calls := createTags(id); len(calls) != 0 {
		t.Errorf("%d CreateTags calls on another cluster's instance, want none: %v", len(calls), calls[0].Parameters)
	}
	if name, ok := instanceTags(t, id)["Name"]; ok {
		t.Errorf("another cluster's instance was named %q", name)
	}
	if v, ok := got.Annotations[v1.TaggedAnnotationKey]; ok {
		t.Errorf("the claim of another cluster's instance is annotated %s=%q", v1.TaggedAnnotationKey, v)
	}
}

// A claim already annotated makes no call, although its instance has no
// Name tag.
func TestAnnotatedClaimMakesNoCall(t *testing.T) {
	id, pid := launch(t, cluster, "done", nil)
	claim := registered(t, "done", pid, map[string]string{v1.TaggedAnnotationKey: "true", v1.ClusterNameTaggedAnnotationKey: "true"})
	if _, err := reconcileOnce(t, claim); err != nil {
		t.Fatal(err)
	}
	if calls := createTags(id); len(calls) != 0 {
		t.Errorf("%d CreateTags calls for an annotated claim, want none: %v", len(calls), calls[0].Parameters)
	}
	if name, ok := instanceTags(t, id)["Name"]; ok {
		t.Errorf("the instance of an annotated claim was named %q", name)
	}
}

// A failed CreateTags (here denied, which the SDK does not retry) leaves
// the claim unannotated and is retried: once EC2 allows it again, the
// instance is tagged and the claim annotated.
func TestFailedTaggingIsRetried(t *testing.T) {
	ctx := testContext(t)
	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "CreateTags", Kind: fault.Deny})
	if err != nil {
		t.Fatal(err)
	}
	removed := false
	t.Cleanup(func() {
		if !removed {
			sim.Faults().Remove(f.ID)
		}
	})
	id, pid := launch(t, cluster, "retried", nil)
	claim := registered(t, "retried", pid, nil)
	got, err := reconcileOnce(t, claim)
	if err == nil {
		t.Error("a reconcile whose CreateTags failed returned no error, so it is not retried")
	}
	if v, ok := got.Annotations[v1.TaggedAnnotationKey]; ok {
		t.Errorf("the claim is annotated %s=%q although tagging failed", v1.TaggedAnnotationKey, v)
	}
	sim.Faults().Remove(f.ID)
	removed = true
	testenv.Eventually(t, ctx, "the claim is annotated after the retry", annotated(t, claim))
	if got := instanceTags(t, id)["Name"]; got != claim.Status.NodeName {
		t.Errorf("instance Name tag %q after the retry, want %q", got, claim.Status.NodeName)
	}
}
