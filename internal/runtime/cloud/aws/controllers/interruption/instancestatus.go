package interruption

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/periodic"
)

// Instance status polling, as Karpenter AWS v1.12+: every minute, the
// instances EC2 reports impaired or with a scheduled event. A status check
// must have failed for two minutes before the instance is replaced (one
// failed reading is often a blip); a scheduled event counts at once, and
// one that has completed or was canceled not at all. Unlike Karpenter's,
// each pass deletes only what pace admits (see pace.go).
const (
	StatusInterval     = time.Minute
	UnhealthyThreshold = 2 * time.Minute
)

// statusFilters are the three DescribeInstanceStatus queries: impaired
// instance checks, impaired system checks, and the event codes that take
// the instance away.
var statusFilters = [][]ec2types.Filter{
	{{Name: aws.String("instance-status.status"), Values: []string{string(ec2types.SummaryStatusImpaired)}}},
	{{Name: aws.String("system-status.status"), Values: []string{string(ec2types.SummaryStatusImpaired)}}},
	{{Name: aws.String("event.code"), Values: []string{
		string(ec2types.EventCodeInstanceReboot), string(ec2types.EventCodeSystemReboot), string(ec2types.EventCodeSystemMaintenance),
		string(ec2types.EventCodeInstanceRetirement), string(ec2types.EventCodeInstanceStop),
	}}},
}

// Unhealthy is what an instance's status says is wrong with it: the kinds
// (InstanceStatus, SystemStatus, EventStatus) that apply.
type Unhealthy struct {
	InstanceID string
	Kinds      []Kind
}

// UnhealthyInstances reads what DescribeInstanceStatus reported at now: a
// failed instance or system check counts once it has failed for
// UnhealthyThreshold, any listed event at once. Pure.
func UnhealthyInstances(statuses []ec2types.InstanceStatus, now time.Time) []Unhealthy {
	var out []Unhealthy
	for _, s := range statuses {
		u := Unhealthy{InstanceID: aws.ToString(s.InstanceId)}
		failedLongEnough := func(sum *ec2types.InstanceStatusSummary) bool {
			if sum == nil {
				return false
			}
			for _, d := range sum.Details {
				if d.Status == ec2types.StatusTypeFailed && now.Sub(aws.ToTime(d.ImpairedSince)) >= UnhealthyThreshold {
					return true
				}
			}
			return false
		}
		if failedLongEnough(s.InstanceStatus) {
			u.Kinds = append(u.Kinds, InstanceStatus)
		}
		if failedLongEnough(s.SystemStatus) {
			u.Kinds = append(u.Kinds, SystemStatus)
		}
		if slices.ContainsFunc(s.Events, pending) {
			u.Kinds = append(u.Kinds, EventStatus)
		}
		if len(u.Kinds) > 0 {
			out = append(out, u)
		}
	}
	return out
}

// pending says whether a scheduled event is still to come: EC2 lists an
// event for a while after it completed or was canceled, its description
// then starting with [Completed] or [Canceled].
func pending(e ec2types.InstanceStatusEvent) bool {
	d := aws.ToString(e.Description)
	return !strings.HasPrefix(d, "[Completed]") && !strings.HasPrefix(d, "[Canceled]")
}

// StatusController polls EC2 instance status and acts on what it finds as
// on the matching interruption message: the NodeClaim is deleted, with no
// graceful drain (PodDisruptionBudgets are not waited for) for failed
// status checks, as Karpenter does: the instance is already broken. It runs
// with or without an interruption queue.
type StatusController struct {
	handler *Controller
	ec2     *ec2.Client
	mu      sync.Mutex
	// seen are the (instance, kind) pairs already counted, so each is
	// counted once while it lasts.
	seen map[string]bool
}

var (
	_ manager.Runnable               = (*StatusController)(nil)
	_ manager.LeaderElectionRunnable = (*StatusController)(nil)
)

// NewStatusController returns the poller; opts.SQS and QueueName are unused.
func NewStatusController(opts Options, client *ec2.Client) *StatusController {
	opts.Logger = opts.Logger.WithName("instancestatus")
	return &StatusController{handler: &Controller{opts: opts}, ec2: client, seen: map[string]bool{}}
}

// Register adds the poller to mgr.
func (c *StatusController) Register(mgr manager.Manager) error { return mgr.Add(c) }

// NeedLeaderElection keeps one poller per cluster.
func (c *StatusController) NeedLeaderElection() bool { return true }

// Start polls every StatusInterval until ctx ends.
func (c *StatusController) Start(ctx context.Context) error {
	return periodic.Run(ctx, clock.RealClock{}, StatusInterval, c.handler.opts.Logger, "checking EC2 instance status", c.Check)
}

// Check reads the instances' status once and acts on the unhealthy ones
// that are this cluster's NodeClaims, as far as pace admits them; the
// others wait for a later pass, with a DisruptionBlocked event.
func (c *StatusController) Check(ctx context.Context) error {
	statuses, err := c.describe(ctx)
	if err != nil {
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && apiErr.ErrorCode() == "UnauthorizedOperation" {
			c.handler.opts.Logger.Error(err, "ec2:DescribeInstanceStatus is not allowed: grant it to the controller's role (see data.joist_controller_policy) to replace instances that fail EC2 status checks")
			return nil
		}
		return err
	}
	unhealthy := UnhealthyInstances(statuses, time.Now())
	if len(unhealthy) == 0 {
		c.forgetExcept(nil)
		return nil
	}
	list, err := c.handler.listClaims(ctx)
	if err != nil {
		return err
	}
	pools := &v1.NodePoolList{}
	if err := c.handler.opts.Kube.List(ctx, pools); err != nil {
		return fmt.Errorf("listing NodePools: %w", err)
	}
	claims := byInstance(list)
	failing := map[string]bool{}
	for _, u := range unhealthy {
		if nc, ok := claims[u.InstanceID]; ok && forceful(u.Kinds) {
			failing[nc.Name] = true
		}
	}
	var poolList []*v1.NodePool
	for i := range pools.Items {
		poolList = append(poolList, &pools.Items[i])
	}
	pace := newPace(list, poolList, failing, time.Now())
	slices.SortFunc(unhealthy, func(a, b Unhealthy) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	current := map[string]bool{}
	var errs []error
	for _, u := range unhealthy {
		nc, ok := claims[u.InstanceID]
		if !ok {
			continue // not ours
		}
		for _, kind := range u.Kinds {
			key := u.InstanceID + "/" + string(kind)
			current[key] = true
			if c.firstSighting(key) {
				c.handler.opts.Logger.Info("EC2 reports an instance of the cluster unhealthy", "instanceID", u.InstanceID, "kind", kind, "NodeClaim", nc.Name)
				instanceStatusUnhealthy.WithLabelValues(category(kind)).Inc()
			}
		}
		if admitted, why := pace.admit(nc, forceful(u.Kinds)); !admitted {
			c.hold(u, nc, why)
			continue
		}
		for _, kind := range u.Kinds {
			m := Message{ID: "instance-status/" + u.InstanceID + "/" + string(kind), Kind: kind, InstanceIDs: []string{u.InstanceID}}
			if err := c.handler.act(ctx, m, nc); err != nil {
				errs = append(errs, err)
			}
		}
	}
	c.forgetExcept(current)
	return errors.Join(errs...)
}

// forceful says whether kinds hold a failed status check.
func forceful(kinds []Kind) bool {
	return slices.ContainsFunc(kinds, func(k Kind) bool { return Message{Kind: k}.Forceful() })
}

// hold tells users why an unhealthy instance's NodeClaim waits.
func (c *StatusController) hold(u Unhealthy, nc *v1.NodeClaim, why string) {
	for _, kind := range u.Kinds {
		c.handler.emit(Message{Kind: kind}, nc)
	}
	c.handler.opts.Recorder.Warning(nc, reasonDisruptionBlocked, actionInterruption, "Replacing the unhealthy instance waits: %s", why)
	c.handler.opts.Logger.Info("unhealthy instance's NodeClaim waits", "instanceID", u.InstanceID, "NodeClaim", nc.Name, "reason", why)
}

func (c *StatusController) describe(ctx context.Context) ([]ec2types.InstanceStatus, error) {
	seen := map[string]bool{}
	var out []ec2types.InstanceStatus
	for _, filters := range statusFilters {
		pages := ec2.NewDescribeInstanceStatusPaginator(c.ec2, &ec2.DescribeInstanceStatusInput{Filters: filters})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("describing EC2 instance status: %w", err)
			}
			for _, s := range page.InstanceStatuses {
				if id := aws.ToString(s.InstanceId); !seen[id] {
					seen[id] = true
					out = append(out, s)
				}
			}
		}
	}
	return out, nil
}

func (c *StatusController) firstSighting(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen[key] {
		return false
	}
	c.seen[key] = true
	return true
}

// forgetExcept drops the sightings no longer reported.
func (c *StatusController) forgetExcept(current map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.seen {
		if !current[k] {
			delete(c.seen, k)
		}
	}
}

// category is the kind as Karpenter's category label: InstanceStatus,
// SystemStatus, EventStatus.
func category(k Kind) string {
	switch k {
	case InstanceStatus:
		return "InstanceStatus"
	case SystemStatus:
		return "SystemStatus"
	}
	return "EventStatus"
}
