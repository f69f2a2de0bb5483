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
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
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
	running, why, _, err = leaderLeases(ctx, kube, now)
	return running, why, err
}

// leaderLeases is controllerRunning, with the longest lease duration the
// Leases state.
func leaderLeases(ctx context.Context, kube dynamic.Interface, now time.Time) (running bool, why string, longest time.Duration, err error) {
	leases, err := kube.Resource(leaseGVR).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + leaderLeaseName})
	if err != nil {
		return false, "", 0, fmt.Errorf("listing leader-election Leases: %w", err)
	}
	if len(leases.Items) == 0 {
		return false, fmt.Sprintf("no Lease %q exists in any namespace", leaderLeaseName), 0, nil
	}
	for _, l := range leases.Items {
		seconds, _, _ := unstructured.NestedInt64(l.Object, "spec", "leaseDurationSeconds")
		longest = max(longest, time.Duration(seconds)*time.Second)
		if fresh, _ := leaseFresh(&l, now); fresh {
			running = true
		}
	}
	if running {
		return true, "", longest, nil
	}
	_, why = leaseFresh(&leases.Items[0], now)
	return false, why, longest, nil
}

// leaseSighting is one look at the leader Leases while waiting to be sure
// no controller runs.
type leaseSighting struct {
	Running bool
	Why     string        // why not running
	Waited  time.Duration // since the first look without a controller
	Window  time.Duration // how long none must be seen
}

// controllerGone reports whether no controller runs and none has run for
// longer than one lease duration, watching the Leases that long. A hand-off
// between replicas leaves the Lease without a holder for a moment (the
// leaving leader releases it, with a 1s duration, until a standby acquires
// it within its retry period), which must not count as no controller. The
// window is the controller's lease duration, or a Lease's own if longer.
// see gets every look; why explains a true.
func controllerGone(ctx context.Context, kube dynamic.Interface, poll time.Duration, see func(leaseSighting)) (gone bool, why string, err error) {
	var start time.Time
	for {
		running, why, longest, err := leaderLeases(ctx, kube, time.Now())
		if err != nil {
			return false, "", err
		}
		if start.IsZero() {
			start = time.Now()
		}
		s := leaseSighting{Running: running, Why: why, Waited: time.Since(start), Window: max(settings.LeaderLeaseDuration, longest)}
		see(s)
		switch {
		case running:
			return false, "", nil
		case s.Waited > s.Window:
			return true, fmt.Sprintf("%s, and no controller took the Lease for %s", why, s.Waited.Round(time.Second)), nil
		}
		select {
		case <-ctx.Done():
			return false, "", ctx.Err()
		case <-time.After(poll):
		}
	}
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
