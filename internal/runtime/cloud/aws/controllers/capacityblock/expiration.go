// Package capacityblock holds the controller that replaces nodes in
// capacity blocks before EC2 reclaims them.
package capacityblock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacityreservation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/periodic"
)

// Interval is how often reserved NodeClaims are checked against their
// reservations' end dates. Karpenter checks every minute; a pass costs a
// cached NodeClaim list and a reservation listing cached for a minute, so
// checking more often only narrows the lag behind the 40-minute mark.
const Interval = 15 * time.Second

// ReasonExpiring is the event on a NodeClaim deleted because its capacity
// block is about to end.
const ReasonExpiring = "CapacityBlockExpiring"

// Expiration deletes the NodeClaims whose capacity block is expiring:
// within capacityreservation.ExpiringWithin (40 minutes) of its end, 10
// minutes before EC2 starts reclaiming the instances. Termination then
// drains each node as for any deletion, and the provisioner launches
// replacements for its pods elsewhere, the block being no longer offered.
// It is a leader-elected runnable.
type Expiration struct {
	kube         client.Client
	reservations *capacityreservation.Provider
	recorder     *events.Recorder
	clock        clock.Clock
}

// NewExpiration wires the controller.
func NewExpiration(kube client.Client, reservations *capacityreservation.Provider, recorder *events.Recorder, clk clock.Clock) *Expiration {
	return &Expiration{kube: kube, reservations: reservations, recorder: recorder, clock: clk}
}

// NeedLeaderElection keeps deletions on the leader.
func (e *Expiration) NeedLeaderElection() bool { return true }

// Start reconciles every Interval until ctx ends.
func (e *Expiration) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("capacityreservation.expiration")
	return periodic.Run(log.IntoContext(ctx, logger), e.clock, Interval, logger, "capacity block expiration", e.Reconcile)
}

// Reconcile runs one pass.
func (e *Expiration) Reconcile(ctx context.Context) error {
	claims := &v1.NodeClaimList{}
	if err := e.kube.List(ctx, claims, client.HasLabels{v1.LabelCapacityReservationID}); err != nil {
		return fmt.Errorf("listing reserved NodeClaims: %w", err)
	}
	byReservation := map[string][]*v1.NodeClaim{}
	for i := range claims.Items {
		nc := &claims.Items[i]
		if !nc.DeletionTimestamp.IsZero() || nc.Labels[v1.LabelCapacityReservationType] != string(awsv1.CapacityReservationTypeCapacityBlock) {
			continue
		}
		id := nc.Labels[v1.LabelCapacityReservationID]
		byReservation[id] = append(byReservation[id], nc)
	}
	if len(byReservation) == 0 {
		return nil
	}
	terms := make([]awsv1.CapacityReservationSelectorTerm, 0, len(byReservation))
	for id := range byReservation {
		terms = append(terms, awsv1.CapacityReservationSelectorTerm{ID: id})
	}
	sort.Slice(terms, func(i, j int) bool { return terms[i].ID < terms[j].ID })
	crs, err := e.reservations.ListTerms(ctx, terms)
	if err != nil {
		return fmt.Errorf("describing the capacity blocks of reserved NodeClaims: %w", err)
	}
	now := e.clock.Now()
	var errs []error
	for _, cr := range crs {
		status, err := capacityreservation.Status(cr, now)
		if err != nil || status.State != awsv1.CapacityReservationStateExpiring {
			continue
		}
		for _, nc := range byReservation[status.ID] {
			if err := e.kube.Delete(ctx, nc); err != nil {
				if !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("deleting NodeClaim %s: %w", nc.Name, err))
				}
				continue
			}
			end := aws.ToTime(cr.EndDate)
			e.recorder.Normal(nc, ReasonExpiring, events.ActionDelete, "Capacity block %s ends at %s; replacing the node before EC2 reclaims it",
				status.ID, end.UTC().Format(time.RFC3339))
			log.FromContext(ctx).Info("deleting NodeClaim for capacity block expiration", "nodeclaim", nc.Name,
				"capacity-reservation-id", status.ID, "end", end)
		}
	}
	return errors.Join(errs...)
}
