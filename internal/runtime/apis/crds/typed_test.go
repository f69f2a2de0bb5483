package crds_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// These tests write objects built with the Go types, as the runtime and the
// provider do, and read them back: spec defaults, the status subresource and
// immutability.

func ptr[T any](v T) *T { return &v }

func condition(kind string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: "Test", Message: "set by the test",
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
}

func goNodePool(name string) *v1.NodePool {
	return &v1.NodePool{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.NodePoolSpec{Template: v1.NodeClaimTemplate{
			ObjectMeta: v1.ObjectMeta{Labels: map[string]string{"team": "a"}},
			Spec: v1.NodeClaimTemplateSpec{
				Requirements: v1.Requirements{{Key: v1.LabelInstanceCategory, Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m"}, MinValues: ptr(2)}},
				NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: awsv1.EC2NodeClassKind, Name: "default"},
				ExpireAfter:  v1.NewNillableDuration(v1.DefaultExpireAfter),
			},
		}},
	}
}

func TestGoNodePoolDefaultsAndStatus(t *testing.T) {
	ctx := testContext(t)
	np := goNodePool("go-nodepool")
	if err := kube.Create(ctx, np); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(testContext(t), np) })

	got := &v1.NodePool{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	d := got.Spec.Disruption
	// A zero NillableDuration is written as "Never", so a Go client that
	// leaves consolidateAfter unset turns consolidation off.
	if !d.ConsolidateAfter.IsNever() || d.ConsolidationPolicy != v1.DefaultConsolidationPolicy ||
		len(d.Budgets) != 1 || d.Budgets[0].Nodes != v1.DefaultBudgetNodes {
		t.Errorf("disruption read back as %+v", d)
	}
	if got.Spec.Template.Spec.ExpireAfter.String() != "720h0m0s" || *got.Spec.Template.Spec.Requirements[0].MinValues != 2 {
		t.Errorf("template read back as %+v", got.Spec.Template.Spec)
	}
	if got.Hash() != np.Hash() {
		t.Errorf("the stored NodePool hashes differently from the one sent")
	}

	got.Status = v1.NodePoolStatus{
		Resources:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("16"), corev1.ResourceMemory: resource.MustParse("64Gi")},
		Nodes:      ptr[int64](4),
		Conditions: []metav1.Condition{condition(v1.ConditionTypeReady, metav1.ConditionTrue)},
	}
	want := got.Status.DeepCopy()
	if err := kube.Status().Update(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(np), got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Status, *want) {
		t.Errorf("status read back as %+v, want %+v", got.Status, *want)
	}
}

func TestGoNodeClaimStatusAndImmutability(t *testing.T) {
	ctx := testContext(t)
	np := goNodePool("owner")
	nc := np.Spec.Template.ToNodeClaim()
	nc.Name = "go-nodeclaim"
	nc.Labels[v1.NodePoolLabelKey] = np.Name
	nc.Annotations = np.HashAnnotations()
	// The runtime narrows requirements to the pool it launched for.
	nc.Spec.Requirements = append(nc.Spec.Requirements,
		v1.NodeSelectorRequirementWithMinValues{Key: v1.NodePoolLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{np.Name}})
	nc.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}
	if err := kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(testContext(t), nc) })

	nc.Status = v1.NodeClaimStatus{
		NodeName:    "ip-10-0-0-1.ec2.internal",
		ProviderID:  "aws:///us-west-2a/i-0123456789abcdef0",
		ImageID:     "ami-0123456789abcdef0",
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("29")},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1930m")},
		Conditions: []metav1.Condition{
			condition(v1.ConditionTypeLaunched, metav1.ConditionTrue),
			condition(v1.ConditionTypeRegistered, metav1.ConditionUnknown),
		},
	}
	want := nc.Status.DeepCopy()
	if err := kube.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got := &v1.NodeClaim{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got.Status, *want) {
		t.Errorf("status read back as %+v, want %+v", got.Status, *want)
	}

	got.Spec.Taints = append(got.Spec.Taints, corev1.Taint{Key: "late", Effect: corev1.TaintEffectNoSchedule})
	err := kube.Update(ctx, got)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("changing a NodeClaim's spec: got %v, want it refused as immutable", err)
	}
}

func TestGoEC2NodeClassDefaultsAndStatus(t *testing.T) {
	ctx := testContext(t)
	nc := &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "go-nodeclass"},
		Spec: awsv1.EC2NodeClassSpec{
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{ID: "sg-0123"}},
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}},
			Role:                       "KarpenterNodeRole-demo",
			BlockDeviceMappings: []*awsv1.BlockDeviceMapping{{DeviceName: ptr("/dev/xvda"), RootVolume: true,
				EBS: &awsv1.BlockDevice{VolumeSize: ptr(resource.MustParse("50Gi")), VolumeType: ptr("gp3")}}},
		},
	}
	if err := kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(testContext(t), nc) })
	if m := nc.Spec.MetadataOptions; m == nil || *m.HTTPEndpoint != "enabled" || *m.HTTPProtocolIPv6 != "disabled" ||
		*m.HTTPPutResponseHopLimit != 1 || *m.HTTPTokens != "required" {
		t.Errorf("metadataOptions defaulted to %+v", m)
	}
	if nc.AMIFamily() != awsv1.AMIFamilyAL2023 {
		t.Errorf("AMIFamily() = %s", nc.AMIFamily())
	}

	nc.Status = awsv1.EC2NodeClassStatus{
		Subnets:        []awsv1.Subnet{{ID: "subnet-1", Zone: "us-west-2a", ZoneID: "usw2-az1"}},
		SecurityGroups: []awsv1.SecurityGroup{{ID: "sg-0123", Name: "nodes"}},
		AMIs: []awsv1.AMI{{ID: "ami-1", Name: "al2023", Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}}},
		CapacityReservations: []awsv1.CapacityReservation{{AvailabilityZone: "us-west-2a", ID: "cr-0123", InstanceMatchCriteria: "targeted",
			InstanceType: "m5.large", OwnerID: "123456789012"}},
		InstanceProfile: "demo_123",
		Conditions:      []metav1.Condition{condition(v1.ConditionTypeReady, metav1.ConditionTrue)},
	}
	if err := kube.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got := &awsv1.EC2NodeClass{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(nc), got); err != nil {
		t.Fatal(err)
	}
	cr := got.Status.CapacityReservations[0]
	if cr.ReservationType != awsv1.CapacityReservationTypeDefault || cr.State != awsv1.CapacityReservationStateActive {
		t.Errorf("capacity reservation defaults: %+v", cr)
	}
	if got.Status.Subnets[0] != nc.Status.Subnets[0] || got.Status.InstanceProfile != "demo_123" || len(got.Status.AMIs) != 1 {
		t.Errorf("status read back as %+v", got.Status)
	}
	if got.Hash("") != nc.Hash("") {
		t.Errorf("the stored EC2NodeClass hashes differently from the one sent")
	}
}
