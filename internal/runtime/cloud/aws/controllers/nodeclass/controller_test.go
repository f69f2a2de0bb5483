package nodeclass_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestNodeClassBecomesReadyWithResolvedStatus(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("ready", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ctx, nc)
	for _, c := range []string{v1.ConditionTypeSubnetsReady, v1.ConditionTypeSecurityGroupsReady, v1.ConditionTypeAMIsReady, v1.ConditionTypeInstanceProfileReady, v1.ConditionTypeValidationSucceeded} {
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, c) {
			t.Errorf("condition %s is not True", c)
		}
	}
	// The simulated VPC has one discoverable private subnet per zone.
	if len(nc.Status.Subnets) != len(sim.EC2.Region().Zones) {
		t.Errorf("subnets = %+v, want one per zone", nc.Status.Subnets)
	}
	for i := range nc.Status.Subnets {
		if nc.Status.Subnets[i].ZoneID == "" {
			t.Errorf("subnet %s has no zone ID", nc.Status.Subnets[i].ID)
		}
	}
	out, err := ec2.NewFromConfig(sim.Config).DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{
		{Name: sdkaws.String("tag:karpenter.sh/discovery"), Values: []string{cluster}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(nc.Status.SecurityGroups) != len(out.SecurityGroups) {
		t.Errorf("security groups = %+v, want the %d discoverable ones", nc.Status.SecurityGroups, len(out.SecurityGroups))
	}
	if len(nc.Status.AMIs) == 0 {
		t.Error("no AMIs resolved")
	}
	if !slices.Contains(nc.Finalizers, v1.AWSTerminationFinalizer) {
		t.Errorf("finalizers = %v", nc.Finalizers)
	}
	if nc.Annotations[v1.EC2NodeClassHashAnnotationKey] != nc.Hash(prov.Settings().ClusterCABundle) || nc.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] != awsv1.EC2NodeClassHashVersion {
		t.Errorf("hash annotations = %v", nc.Annotations)
	}

	// The managed instance profile holds the role and carries the ownership tags.
	if nc.Status.InstanceProfile != prov.InstanceProfiles().Name(nc) {
		t.Errorf("instance profile = %q, want %q", nc.Status.InstanceProfile, prov.InstanceProfiles().Name(nc))
	}
	ip, err := iam.NewFromConfig(sim.Config).GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: sdkaws.String(nc.Status.InstanceProfile)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ip.InstanceProfile.Roles) != 1 || sdkaws.ToString(ip.InstanceProfile.Roles[0].RoleName) != testenv.NodeRole {
		t.Errorf("instance profile roles = %+v", ip.InstanceProfile.Roles)
	}
	tags := map[string]string{}
	for _, tag := range ip.InstanceProfile.Tags {
		tags[sdkaws.ToString(tag.Key)] = sdkaws.ToString(tag.Value)
	}
	for k, v := range map[string]string{"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster, corev1.LabelTopologyRegion: sim.Config.Region, v1.LabelNodeClass: nc.Name} {
		if tags[k] != v {
			t.Errorf("instance profile tag %s = %q, want %q", k, tags[k], v)
		}
	}
}

func TestNodeClassNotReadyExplainsWhy(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("no-subnets", cluster, "al2023@latest")
	nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "some-other-cluster"}}}
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
	testenv.Eventually(t, ctx, "SubnetsReady=False", func() error {
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeSubnetsReady)
		if c == nil || c.Status != "False" {
			return fmt.Errorf("SubnetsReady = %+v", c)
		}
		return nil
	})
	ready := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady)
	if ready == nil || ready.Status != "False" || !strings.Contains(ready.Message, v1.ConditionTypeSubnetsReady) {
		t.Errorf("Ready = %+v, want False naming SubnetsReady", ready)
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeAMIsReady); c == nil || c.Status != "True" {
		t.Errorf("AMIsReady = %+v; the other parts should still resolve", c)
	}
}

func TestDeletionWaitsForNodeClaimsThenCleansUp(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("deleted", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	waitReady(t, ctx, nc)
	// A launch makes a launch template for the node class.
	claim := testenv.NodeClaim("deleted-claim", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	launched, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	if err := prov.Delete(ctx, launched); err != nil {
		t.Fatal(err)
	}
	ec2c := ec2.NewFromConfig(sim.Config)
	templates := func() int {
		out, err := ec2c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
			{Name: sdkaws.String("tag:" + v1.LabelNodeClass), Values: []string{nc.Name}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.LaunchTemplates)
	}
	if templates() == 0 {
		t.Fatal("no launch template tagged with the node class after a launch")
	}
	if err := kube.Client.Create(ctx, claim); err != nil {
		t.Fatal(err)
	}
	profile := nc.Status.InstanceProfile
	if err := kube.Client.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ctx, "WaitingOnNodeClaimTermination event", func() error {
		list := &eventsv1.EventList{}
		if err := kube.Client.List(ctx, list); err != nil {
			return err
		}
		for _, e := range list.Items {
			if e.Reason == nodeclass.WaitingOnNodeClaimTermination && e.Regarding.Name == nc.Name && strings.Contains(e.Note, claim.Name) {
				return nil
			}
		}
		return fmt.Errorf("no event among %d", len(list.Items))
	})
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatalf("node class went away while a NodeClaim referenced it: %v", err)
	}
	if templates() == 0 {
		t.Fatal("launch templates deleted while a NodeClaim referenced the node class")
	}

	if err := kube.Client.Delete(ctx, claim); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, ctx, "EC2NodeClass deleted", func() error {
		err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still present (%v), finalizers %v", err, nc.Finalizers)
	})
	if n := templates(); n != 0 {
		t.Errorf("%d launch templates of the deleted node class remain", n)
	}
	_, err = iam.NewFromConfig(sim.Config).GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: sdkaws.String(profile)})
	var nf *iamtypes.NoSuchEntityException
	if !errors.As(err, &nf) {
		t.Errorf("instance profile %s after deletion: %v, want NoSuchEntity", profile, err)
	}
}

// waitReady waits for the controller to make nc Ready and refreshes it.
// readyNodeClass creates an al2023 node class named name, deleted when the
// test ends, and returns it once the controller has made it Ready.
func readyNodeClass(t *testing.T, ctx context.Context, name string) *awsv1.EC2NodeClass {
	t.Helper()
	nc := testenv.NodeClass(name, cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), nc) })
	waitReady(t, ctx, nc)
	return nc
}

func waitReady(t *testing.T, ctx context.Context, nc *awsv1.EC2NodeClass) {
	t.Helper()
	testenv.Eventually(t, ctx, "EC2NodeClass Ready", func() error {
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) {
			return fmt.Errorf("conditions %+v", nc.Status.Conditions)
		}
		return nil
	})
}
