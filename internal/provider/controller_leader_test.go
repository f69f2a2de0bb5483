package provider

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// TestAccControllerRefusesBesideKarpenter: while another Karpenter-API
// controller holds a live leader-election Lease in another namespace,
// joist_controller refuses, naming the Lease, its holder and the migration
// guide, and installs nothing.
func TestAccControllerRefusesBesideKarpenter(t *testing.T) {
	awsSim(t)
	ctx := context.Background()
	cs, err := kubernetes.NewForConfig(testCluster.config)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "acc-karpenter"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// Renewed far ahead so it stays live however long the test takes,
	// as a skewed clock could leave it.
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "karpenter-leader-election"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("karpenter-5d8c7b9f4-q2x7m_0c1d"), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: time.Now().Add(time.Hour)},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoordinationV1().Leases(ns).Delete(context.Background(), "karpenter-leader-election", metav1.DeleteOptions{})
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      controllerTestConfig(`wait_for_rollout = false`),
			ExpectError: regexp.MustCompile(`(?s)Lease\s+acc-karpenter/karpenter-leader-election\s+is\s+held\s+by.*q2x7m_0c1d.*Stop\s+the\s+other\s+controller.*migrating-from-karpenter\.md`),
		}},
	})
	if _, err := cs.AppsV1().Deployments("kube-system").Get(ctx, controllerdeploy.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Deployment was installed beside the other controller (err %v)", err)
	}
}
