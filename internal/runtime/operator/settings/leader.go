package settings

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
)

// LeaseSlack is how long past its lease duration a Lease still counts as
// held: renewals land late on a loaded apiserver, and clocks differ a little.
const LeaseSlack = 5 * time.Second

// MigrationGuide is where the steps off another controller are written.
const MigrationGuide = "docs/guides/migrating-from-karpenter.md"

// ForeignLeader returns a Lease named name in another namespace than
// namespace that a holder renewed within its lease duration (plus
// LeaseSlack) of now, or nil. Such a Lease is another controller speaking
// the Karpenter API (Karpenter itself, or a second Joist): it elects its
// own leader, so both would provision and consolidate the same NodePools.
func ForeignLeader(leases []coordinationv1.Lease, namespace, name string, now time.Time) *coordinationv1.Lease {
	for i := range leases {
		l := &leases[i]
		if l.Name == name && l.Namespace != namespace && held(l, now) {
			return l
		}
	}
	return nil
}

// held says whether a Lease has a holder that renewed it recently enough.
// A released Lease has no holder; one never renewed has no renew time.
func held(l *coordinationv1.Lease, now time.Time) bool {
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || l.Spec.RenewTime == nil {
		return false
	}
	d := LeaderLeaseDuration
	if l.Spec.LeaseDurationSeconds != nil && *l.Spec.LeaseDurationSeconds > 0 {
		d = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.Before(l.Spec.RenewTime.Add(d + LeaseSlack))
}

// ForeignLeaderError is the refusal to run beside the holder of l.
func ForeignLeaderError(l *coordinationv1.Lease) error {
	return fmt.Errorf("another Karpenter-API controller is running: Lease %s/%s is held by %q (renewed %s). "+
		"Running beside it, both would provision and consolidate the same NodePools and delete each other's launch templates. "+
		"Stop the other controller first (scale its Deployment to zero or uninstall it, then wait for its Lease to expire); see %s",
		l.Namespace, l.Name, *l.Spec.HolderIdentity, l.Spec.RenewTime.UTC().Format(time.RFC3339), MigrationGuide)
}
