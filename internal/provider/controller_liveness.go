package provider

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// leaderLeaseName is the controller's default leader-election Lease
// (operator setting LEADER_ELECTION_NAME, as in Karpenter).
const leaderLeaseName = controllerdeploy.LeaderElectionLease

var leaseGVR = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// controllerRunning decides whether a controller is there to drain and
// terminate nodes: some namespace holds a Lease named leaderLeaseName whose
// holder renewed it within its lease duration. A controller that lost its
// lease, or never started, cannot finish a NodeClaim's termination, so
// waiting for one would only run into the timeout. why explains a false.
func controllerRunning(ctx context.Context, kube dynamic.Interface, now time.Time) (running bool, why string, err error) {
	leases, err := kube.Resource(leaseGVR).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + leaderLeaseName})
	if err != nil {
		return false, "", fmt.Errorf("listing leader-election Leases: %w", err)
	}
	if len(leases.Items) == 0 {
		return false, fmt.Sprintf("no Lease %q exists in any namespace", leaderLeaseName), nil
	}
	for _, l := range leases.Items {
		if fresh, _ := leaseFresh(&l, now); fresh {
			return true, "", nil
		}
	}
	_, why = leaseFresh(&leases.Items[0], now)
	return false, why, nil
}

func leaseFresh(l *unstructured.Unstructured, now time.Time) (bool, string) {
	where := l.GetNamespace() + "/" + l.GetName()
	holder, _, _ := unstructured.NestedString(l.Object, "spec", "holderIdentity")
	if holder == "" {
		return false, fmt.Sprintf("Lease %s has no holder", where)
	}
	renew, _, _ := unstructured.NestedString(l.Object, "spec", "renewTime")
	seconds, _, _ := unstructured.NestedInt64(l.Object, "spec", "leaseDurationSeconds")
	renewed, err := time.Parse(time.RFC3339Nano, renew)
	if err != nil {
		return false, fmt.Sprintf("Lease %s held by %s was never renewed", where, holder)
	}
	if expiry := renewed.Add(time.Duration(seconds) * time.Second); now.After(expiry) {
		return false, fmt.Sprintf("Lease %s held by %s expired at %s", where, holder, expiry.UTC().Format(time.RFC3339))
	}
	return true, ""
}
