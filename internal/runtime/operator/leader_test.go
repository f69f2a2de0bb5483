package operator

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// The controller refuses to start while another Karpenter-API controller
// holds a live leader-election Lease of its name in another namespace, and
// starts once that Lease is released; its own namespace's Lease never
// counts.
func TestRefuseForeignLeader(t *testing.T) {
	ctx := context.Background()
	kube := testenv.KubeFor(t)
	cs, err := kubernetes.NewForConfig(kube.Config)
	if err != nil {
		t.Fatal(err)
	}
	const name = "leader-check-lease"
	s := &Settings{LeaderElectionName: name, LeaderElectionNamespace: "joist-leader-check"}
	create := func(ns, holder string) *coordinationv1.Lease {
		t.Helper()
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		l, err := cs.CoordinationV1().Leases(ns).Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
				RenewTime: &metav1.MicroTime{Time: time.Now()}, AcquireTime: &metav1.MicroTime{Time: time.Now()},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	create(s.LeaderElectionNamespace, "joist-0")
	if err := refuseForeignLeader(ctx, kube.Config, s, time.Now()); err != nil {
		t.Fatalf("own Lease only: %v", err)
	}
	foreign := create("karpenter-leader-check", "karpenter-6c8f9-x2z")
	err = refuseForeignLeader(ctx, kube.Config, s, time.Now())
	if err == nil {
		t.Fatal("a live foreign Lease: the controller starts, want a refusal")
	}
	for _, want := range []string{"karpenter-leader-check/" + name, "karpenter-6c8f9-x2z", "migrating-from-karpenter.md"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %q", err, want)
		}
	}
	// Released as controller-runtime releases it on shutdown.
	foreign.Spec.HolderIdentity = ptr.To("")
	if _, err := cs.CoordinationV1().Leases(foreign.Namespace).Update(ctx, foreign, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := refuseForeignLeader(ctx, kube.Config, s, time.Now()); err != nil {
		t.Fatalf("released foreign Lease: %v", err)
	}
}

// With LEADER_ELECTION_NAMESPACE unset, the controller's own Lease is in
// its pod's namespace, so the Lease of its other replicas is not foreign.
func TestOwnNamespaceIsThePodsWhenUnset(t *testing.T) {
	pod := func(string) ([]byte, error) { return []byte("karpenter\n"), nil }
	none := func(string) ([]byte, error) { return nil, os.ErrNotExist }
	for _, tc := range []struct {
		setting string
		read    func(string) ([]byte, error)
		want    string
	}{{"joist", pod, "joist"}, {"", pod, "karpenter"}, {"", none, ""}} {
		if got := ownNamespace(tc.setting, tc.read); got != tc.want {
			t.Errorf("ownNamespace(%q) = %q, want %q", tc.setting, got, tc.want)
		}
	}
}
