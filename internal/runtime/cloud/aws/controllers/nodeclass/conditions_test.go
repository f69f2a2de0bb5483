package nodeclass_test

import (
	"context"
	"fmt"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// karpenterConditions is Karpenter v1.15's EC2NodeClass condition set
// (StatusConditions, reserved capacity on): a client reading the object
// with Karpenter's types takes Ready as the conjunction of all of them.
var karpenterConditions = []string{
	v1.ConditionTypeAMIsReady, v1.ConditionTypeSubnetsReady, v1.ConditionTypeSecurityGroupsReady,
	v1.ConditionTypeInstanceProfileReady, v1.ConditionTypeValidationSucceeded,
	v1.ConditionTypePlacementGroupReady, v1.ConditionTypeCapacityReservationsReady,
}

// TestResolvedStatusHasKarpenterConditionSet: a node class without a
// placement group selector or capacity reservation terms has every
// condition of Karpenter's set True, so Karpenter's own Ready computation
// agrees with Ready=True.
func TestResolvedStatusHasKarpenterConditionSet(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, ctx, "condition-set")
	for _, c := range append(karpenterConditions, v1.ConditionTypeReady) {
		if got := meta.FindStatusCondition(nc.Status.Conditions, c); got == nil || got.Status != metav1.ConditionTrue || got.Reason != c {
			t.Errorf("%s = %+v, want True with reason %s", c, got, c)
		}
	}
}

// want is one condition as Karpenter's e2e suites compare it.
type want struct {
	typ    string
	status metav1.ConditionStatus
	reason string
	msg    string
}

// expectConditions waits until the controller has written the conditions
// wanted, failing with the last difference if it never does.
func expectConditions(t *testing.T, ctx context.Context, nc *awsv1.EC2NodeClass, wants ...want) {
	t.Helper()
	testenv.Eventually(t, ctx, "conditions", func() error {
		if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			return err
		}
		for _, w := range wants {
			got := meta.FindStatusCondition(nc.Status.Conditions, w.typ)
			if got == nil || got.Status != w.status || got.Reason != w.reason || (w.msg != "" && got.Message != w.msg) {
				return fmt.Errorf("%s = %+v, want %s, reason %q, message %q", w.typ, got, w.status, w.reason, w.msg)
			}
		}
		return nil
	})
}

// TestNotFoundConditionsMatchKarpenter: each selector that matches nothing
// gives Karpenter's reason and message, ValidationSucceeded waits on it as
// DependenciesNotReady, and Ready lists the False conditions latest first.
func TestNotFoundConditionsMatchKarpenter(t *testing.T) {
	nothing := map[string]string{"karpenter.sh/discovery": "no-such-cluster"}
	for _, tc := range []struct {
		name   string
		edit   func(*awsv1.EC2NodeClass)
		wanted want
		ready  string
	}{
		{"subnets", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = []awsv1.SubnetSelectorTerm{{Tags: nothing}}
		},
			want{v1.ConditionTypeSubnetsReady, metav1.ConditionFalse, "SubnetsNotFound", "SubnetSelector did not match any Subnets"},
			"ValidationSucceeded=False, SubnetsReady=False"},
		{"security-groups", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []awsv1.SecurityGroupSelectorTerm{{Tags: nothing}}
		}, want{v1.ConditionTypeSecurityGroupsReady, metav1.ConditionFalse, "SecurityGroupsNotFound", "SecurityGroupSelector did not match any SecurityGroups"},
			"ValidationSucceeded=False, SecurityGroupsReady=False"},
		{"amis", func(nc *awsv1.EC2NodeClass) {
			nc.Spec.AMIFamily = ptr.To(awsv1.AMIFamilyAL2023)
			nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Tags: nothing}}
		},
			want{v1.ConditionTypeAMIsReady, metav1.ConditionFalse, "AMINotFound", "AMISelector did not match any AMIs"},
			"ValidationSucceeded=False, AMIsReady=False"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			nc := testenv.NodeClass("notfound-"+tc.name, cluster, "al2023@latest")
			tc.edit(nc)
			if err := kube.Client.Create(ctx, nc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
			expectConditions(t, ctx, nc, tc.wanted,
				want{v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, "DependenciesNotReady", "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"},
				want{v1.ConditionTypeReady, metav1.ConditionFalse, "UnhealthyDependents", tc.ready})
		})
	}
}

// TestPlacementGroupNotFoundMatchesKarpenter: a selector naming no group
// gives Karpenter's reason and message, and Ready is False for it alone.
func TestPlacementGroupNotFoundMatchesKarpenter(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("pg-parity", cluster, "al2023@latest")
	nc.Spec.PlacementGroupSelector = &awsv1.PlacementGroupSelector{Name: "no-such-group"}
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
	expectConditions(t, ctx, nc,
		want{v1.ConditionTypePlacementGroupReady, metav1.ConditionFalse, "PlacementGroupNotFound", `Placement group "no-such-group" not found`},
		want{v1.ConditionTypeValidationSucceeded, metav1.ConditionTrue, v1.ConditionTypeValidationSucceeded, ""},
		want{v1.ConditionTypeReady, metav1.ConditionFalse, "UnhealthyDependents", "PlacementGroupReady=False"})
}

// TestMissingRoleLeavesInstanceProfileUnknown: as in Karpenter, a role
// that does not exist leaves InstanceProfileReady, ValidationSucceeded and
// Ready Unknown (still reconciling), not False; the reason and message
// still say why.
func TestMissingRoleLeavesInstanceProfileUnknown(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("role-missing", cluster, "al2023@latest")
	nc.Spec.Role = "KarpenterNodeRole-invalidRole"
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
	expectConditions(t, ctx, nc,
		want{v1.ConditionTypeInstanceProfileReady, metav1.ConditionUnknown, "InstanceProfileCreationFailed", ""},
		want{v1.ConditionTypeValidationSucceeded, metav1.ConditionUnknown, "DependenciesNotReady", "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"},
		want{v1.ConditionTypeReady, metav1.ConditionUnknown, "ReconcilingDependents", "ValidationSucceeded=Unknown, InstanceProfileReady=Unknown"})
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeInstanceProfileReady); c != nil && c.Message == "" {
		t.Error("InstanceProfileReady has no message naming the failure")
	}
}

// TestUnsupportedKubeletFieldMatchesKarpenter: a kubelet field the AMI
// family cannot pass on is Karpenter's UnsupportedKubeletConfiguration; a
// malformed one stays InvalidKubeletConfiguration.
func TestUnsupportedKubeletFieldMatchesKarpenter(t *testing.T) {
	for _, tc := range []struct {
		name, alias, field, value, reason string
	}{
		{"unsupported", "al2@latest", "serializeImagePulls", "false", "UnsupportedKubeletConfiguration"},
		{"invalid", "al2023@latest", "noSuchKubeletField", "1", "InvalidKubeletConfiguration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testContext(t)
			nc := testenv.NodeClass("kubelet-"+tc.name, cluster, tc.alias)
			nc.Spec.Kubelet = awsv1.KubeletConfiguration{tc.field: apiextensionsv1.JSON{Raw: []byte(tc.value)}}
			if err := kube.Client.Create(ctx, nc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
			expectConditions(t, ctx, nc, want{v1.ConditionTypeValidationSucceeded, metav1.ConditionFalse, tc.reason, ""})
		})
	}
}
