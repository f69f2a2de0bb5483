package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacityreservation"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/placementgroup"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
)

// Requeue cadences: resolved values are re-checked every few minutes (the
// providers' caches make that cheap), unresolved ones every minute, and a
// part that failed transiently soon.
const (
	RequeueResolved   = 5 * time.Minute
	RequeueUnresolved = time.Minute
	// RequeueSubnets is shorter: free addresses shift with every launch.
	RequeueSubnets = time.Minute
	// RequeueTransient retries a part an AWS call failed to resolve.
	RequeueTransient = 15 * time.Second
	// PartTimeout bounds each part's resolution, the SDK's retries
	// included (8 attempts span about 75 s, the first four about 15 s):
	// past it the part counts as failed transiently and is retried soon.
	PartTimeout = 15 * time.Second
)

// Karpenter's messages for a selector that matches nothing; its users and
// tests compare them, so they are kept word for word.
const (
	MessageSubnetsNotFound        = "SubnetSelector did not match any Subnets"
	MessageSecurityGroupsNotFound = "SecurityGroupSelector did not match any SecurityGroups"
	MessageAMIsNotFound           = "AMISelector did not match any AMIs"
)

// Transient is an AWS failure (throttling, a 5xx, a timeout) that left a
// part of the node class unresolved. It says nothing about the node class,
// so the part's last resolution and condition are kept.
type Transient struct {
	Part      string // "subnets", "security groups", "AMIs", "instance profile", "capacity reservations", "placement group"
	Condition string // the part's condition, e.g. SubnetsReady
	Call      string // the failing call, e.g. "EC2 DescribeSubnets"
	Err       error
}

// DenialGrace is how long an IAM denial (AccessDenied,
// UnauthorizedOperation) of a resolving call keeps the part's last
// resolution, as a transient error does: a policy edit or its propagation
// lag should not turn the node class NotReady and fail the launches in
// flight. A denial that lasts longer is taken as definite: the part's
// condition goes False and the node class NotReady.
const DenialGrace = 30 * time.Minute

// Denied is an IAM denial of a call that resolves a part; the part's last
// resolution is kept until Until.
type Denied struct {
	Part      string
	Condition string
	Call      string // e.g. "EC2 DescribeSubnets"
	Action    string // the missing permission, e.g. "ec2:DescribeSubnets"
	Err       error
	Until     time.Time
}

// Denials remembers since when IAM has denied each part of each node
// class. It lives in memory: a restarted controller grants a new grace.
type Denials struct {
	mu    sync.Mutex
	since map[types.UID]map[string]time.Time
}

// NewDenials returns an empty record.
func NewDenials() *Denials { return &Denials{since: map[types.UID]map[string]time.Time{}} }

// start is when the denial of the part began, now if this is its first.
func (d *Denials) start(uid types.UID, part string, now time.Time) time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	parts := d.since[uid]
	if parts == nil {
		parts = map[string]time.Time{}
		d.since[uid] = parts
	}
	if t, ok := parts[part]; ok {
		return t
	}
	parts[part] = now
	return now
}

// keepOnly forgets the node class's denials of parts not in denied: they
// resolved, or got a definite answer.
func (d *Denials) keepOnly(uid types.UID, denied []Denied) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for part := range d.since[uid] {
		if !slices.ContainsFunc(denied, func(x Denied) bool { return x.Part == part }) {
			delete(d.since[uid], part)
		}
	}
	if len(d.since[uid]) == 0 {
		delete(d.since, uid)
	}
}

// resolution collects one Resolve pass's outcome.
type resolution struct {
	nc        *awsv1.EC2NodeClass
	requeue   time.Duration
	transient []Transient
	denials   *Denials
	now       time.Time
	denied    []Denied
}

// failed records a part that could not be resolved. A definite answer
// sets its condition False. A transient AWS error keeps a True condition
// and the status it guards, and so does an IAM denial for DenialGrace
// since it began; only a part that never resolved is marked False at once.
func (r *resolution) failed(part, condition, reason string, err error) {
	r.failedAs(metav1.ConditionFalse, part, condition, reason, err)
}

// failedAs is failed, marking the condition with status.
func (r *resolution) failedAs(status metav1.ConditionStatus, part, condition, reason string, err error) {
	resolved := meta.IsStatusConditionTrue(r.nc.Status.Conditions, condition)
	switch {
	case awserr.IsTransient(err):
		r.transient = append(r.transient, Transient{Part: part, Condition: condition, Call: awserr.Operation(err), Err: err})
		r.requeue = min(r.requeue, RequeueTransient)
		if resolved {
			return
		}
	case awserr.IsAccessDenied(err):
		since := r.denials.start(r.nc.UID, part, r.now)
		d := Denied{Part: part, Condition: condition, Call: awserr.Operation(err), Action: awserr.DeniedAction(err), Err: err, Until: since.Add(DenialGrace)}
		if resolved && r.now.Before(d.Until) {
			r.denied = append(r.denied, d)
			r.requeue = min(r.requeue, RequeueUnresolved, max(time.Second, d.Until.Sub(r.now)))
			return
		}
		// The same message on every pass, so the status is not rewritten.
		err = fmt.Errorf("the controller's IAM policy lacks %s (a denial keeps the last resolution for %s at most): %w", d.Action, DenialGrace, err)
	}
	setCondition(r.nc, condition, status, reason, err.Error())
	r.requeue = min(r.requeue, RequeueUnresolved)
}

// notFound records a definite empty answer.
func (r *resolution) notFound(condition, reason, msg string) {
	setFalse(r.nc, condition, reason, msg)
	r.requeue = min(r.requeue, RequeueUnresolved)
}

// Resolve fills nc.Status from AWS and sets every condition including
// Ready. It returns when to look again and the parts kept from the last
// resolution because AWS failed transiently. An IAM denial keeps a part's
// last resolution too (this call's grace starts now; the controller
// tracks it across passes, see Resolution).
func Resolve(ctx context.Context, p *awsprovider.Provider, nc *awsv1.EC2NodeClass) (time.Duration, []Transient) {
	res := NewDenials().Resolve(ctx, p, nc, time.Now())
	return res.Requeue, res.Transient
}

// Resolution is one pass's outcome: when to look again, and the parts
// kept from the last resolution because AWS failed transiently or IAM
// denied the call.
type Resolution struct {
	Requeue   time.Duration
	Transient []Transient
	Denied    []Denied
}

// Resolve is Resolve with denials dated by d, at now.
func (d *Denials) Resolve(ctx context.Context, p *awsprovider.Provider, nc *awsv1.EC2NodeClass, now time.Time) Resolution {
	r := &resolution{nc: nc, requeue: RequeueResolved, denials: d, now: now}
	defer func() { d.keepOnly(nc.UID, r.denied) }()
	resolve(ctx, p, r)
	return Resolution{Requeue: r.requeue, Transient: r.transient, Denied: r.denied}
}

// resolve resolves the node class's parts in order, each bounded by
// PartTimeout, then validates the launch and sets Ready.
func resolve(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	for _, part := range []func(context.Context, *awsprovider.Provider, *resolution){
		resolveSubnets, resolveSecurityGroups, resolveAMIs, resolveInstanceProfile,
		resolveCapacityReservations, resolvePlacementGroup, validateLaunch,
	} {
		part(ctx, p, r)
	}
	setRoot(r.nc, readyConditions(p))
}

// bounded runs f with at most PartTimeout.
func bounded(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, PartTimeout)
	defer cancel()
	return f(ctx)
}

// selected is a part that lists what selector terms match: a failed call
// keeps the last resolution (see resolution.failed), nothing matching is
// definite, and anything else is written to the status.
type selected[T any] struct {
	name, condition, failReason, notFoundReason, notFoundMessage string
	list                                                         func(context.Context) ([]T, error)
	set                                                          func([]T)
}

func (s selected[T]) resolve(ctx context.Context, r *resolution) bool {
	var got []T
	if err := bounded(ctx, func(ctx context.Context) (err error) { got, err = s.list(ctx); return }); err != nil {
		r.failed(s.name, s.condition, s.failReason, err)
		return false
	}
	s.set(got)
	if len(got) == 0 {
		r.notFound(s.condition, s.notFoundReason, s.notFoundMessage)
		return false
	}
	setTrue(r.nc, s.condition)
	return true
}

func resolveSubnets(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	if (selected[ec2types.Subnet]{
		name: "subnets", condition: v1.ConditionTypeSubnetsReady, failReason: "SubnetsResolutionFailed",
		notFoundReason: "SubnetsNotFound", notFoundMessage: MessageSubnetsNotFound,
		list: func(ctx context.Context) ([]ec2types.Subnet, error) { return p.Subnets().List(ctx, nc) },
		set: func(subnets []ec2types.Subnet) {
			nc.Status.Subnets = nil
			for _, s := range subnets {
				nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId)})
			}
		},
	}).resolve(ctx, r) {
		r.requeue = min(r.requeue, RequeueSubnets)
	}
}

func resolveSecurityGroups(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	selected[ec2types.SecurityGroup]{
		name: "security groups", condition: v1.ConditionTypeSecurityGroupsReady, failReason: "SecurityGroupsResolutionFailed",
		notFoundReason: "SecurityGroupsNotFound", notFoundMessage: MessageSecurityGroupsNotFound,
		list: func(ctx context.Context) ([]ec2types.SecurityGroup, error) { return p.SecurityGroups().List(ctx, nc) },
		set: func(groups []ec2types.SecurityGroup) {
			nc.Status.SecurityGroups = nil
			for _, g := range groups {
				nc.Status.SecurityGroups = append(nc.Status.SecurityGroups, awsv1.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)})
			}
		},
	}.resolve(ctx, r)
}

func resolveAMIs(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	selected[awsv1.AMI]{
		name: "AMIs", condition: v1.ConditionTypeAMIsReady, failReason: "AMIsResolutionFailed",
		notFoundReason: "AMINotFound", notFoundMessage: MessageAMIsNotFound,
		list: func(ctx context.Context) ([]awsv1.AMI, error) { return p.AMIs().List(ctx, nc) },
		set: func(amis []awsv1.AMI) {
			nc.Status.AMIs = nil
			if len(amis) > 0 {
				nc.Status.AMIs = amis
			}
		},
	}.resolve(ctx, r)
}

func resolveInstanceProfile(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	var profile string
	if err := bounded(ctx, func(ctx context.Context) (err error) { profile, err = p.InstanceProfiles().Resolve(ctx, nc); return }); err != nil {
		reason := "InstanceProfileCreationFailed"
		if nc.Spec.InstanceProfile != nil {
			reason = "InstanceProfileNotFound"
		}
		// Karpenter leaves the condition Unknown on any failure (a missing
		// role, a missing profile): Ready is then Unknown, not False.
		r.failedAs(metav1.ConditionUnknown, "instance profile", v1.ConditionTypeInstanceProfileReady, reason, err)
		return
	}
	nc.Status.InstanceProfile = profile
	setTrue(nc, v1.ConditionTypeInstanceProfileReady)
}

// resolveCapacityReservations lists the selected reservations. None
// selected is not an error: launches use spot and on-demand until one is.
func resolveCapacityReservations(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	if p.Settings().DisableReservedCapacity {
		nc.Status.CapacityReservations = nil
		meta.RemoveStatusCondition(&nc.Status.Conditions, v1.ConditionTypeCapacityReservationsReady)
		return
	}
	var reservations []ec2types.CapacityReservation
	if err := bounded(ctx, func(ctx context.Context) (err error) {
		reservations, err = p.CapacityReservations().List(ctx, nc)
		return
	}); err != nil {
		r.failed("capacity reservations", v1.ConditionTypeCapacityReservationsReady, "CapacityReservationsResolutionFailed", err)
		return
	}
	nc.Status.CapacityReservations = nil
	now := time.Now()
	for _, cr := range reservations {
		status, err := capacityreservation.Status(cr, now)
		if err != nil {
			log.FromContext(ctx).Error(err, "skipping a capacity reservation", "ec2nodeclass", nc.Name)
			continue
		}
		nc.Status.CapacityReservations = append(nc.Status.CapacityReservations, status)
		// Resolve again when a block starts expiring, so its offering
		// goes with its status.
		if status.ReservationType == awsv1.CapacityReservationTypeCapacityBlock && status.State == awsv1.CapacityReservationStateActive && status.EndTime != nil {
			r.requeue = min(r.requeue, max(time.Second, status.EndTime.Sub(now)-capacityreservation.ExpiringWithin))
		}
	}
	setTrue(nc, v1.ConditionTypeCapacityReservationsReady)
}

func resolvePlacementGroup(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	sel := nc.Spec.PlacementGroupSelector
	if sel == nil {
		// Nothing to resolve is ready, as in Karpenter: the condition is
		// one of Ready's whether or not a selector is set.
		setTrue(nc, v1.ConditionTypePlacementGroupReady)
		return
	}
	var pg *placementgroup.PlacementGroup
	if err := bounded(ctx, func(ctx context.Context) (err error) { pg, err = p.PlacementGroups().Get(ctx, nc); return }); err != nil {
		r.failed("placement group", v1.ConditionTypePlacementGroupReady, "PlacementGroupResolutionFailed", err)
		return
	}
	if pg == nil {
		r.notFound(v1.ConditionTypePlacementGroupReady, "PlacementGroupNotFound", fmt.Sprintf("Placement group %q not found", selectorString(sel)))
		return
	}
	if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypePlacementGroupReady); c == nil || c.Status != metav1.ConditionTrue {
		log.FromContext(ctx).Info("discovered placement group", "id", pg.ID, "name", pg.Name, "strategy", pg.Strategy)
	}
	setTrue(nc, v1.ConditionTypePlacementGroupReady)
}

// validateLaunch checks what the node class would launch with: its user
// data inputs (the cluster CIDR among them) and the launch permissions.
func validateLaunch(ctx context.Context, p *awsprovider.Provider, r *resolution) {
	nc := r.nc
	var boot userdata.Options
	var bootErr error
	_ = bounded(ctx, func(ctx context.Context) error {
		boot, bootErr = p.BootstrapOptions(ctx, nc, nc.Spec.Kubelet)
		return nil
	})
	if cidrErr := (*awsprovider.ClusterCIDRError)(nil); errors.As(bootErr, &cidrErr) {
		// Nothing launches from the node class until the CIDR is known:
		// the condition names the cause, and the call is retried.
		r.requeue = min(r.requeue, RequeueUnresolved)
		if awserr.IsTransient(bootErr) {
			r.transient = append(r.transient, Transient{Part: "cluster CIDR", Condition: v1.ConditionTypeValidationSucceeded, Call: awserr.Operation(bootErr), Err: bootErr})
			r.requeue = min(r.requeue, RequeueTransient)
		}
	}
	reason, msg := validate(nc, boot, bootErr)
	if reason == "" && awaitingDependencies(r.nc) {
		return
	}
	if reason == "" {
		_ = bounded(ctx, func(ctx context.Context) error { reason, msg = p.ValidateLaunchPermissions(ctx, nc); return nil })
	}
	if reason != "" {
		setFalse(nc, v1.ConditionTypeValidationSucceeded, reason, msg)
	} else {
		setTrue(nc, v1.ConditionTypeValidationSucceeded)
	}
}

// selectorString is the name or, without one, the ID a selector asks for.
func selectorString(sel *awsv1.PlacementGroupSelector) string {
	if sel.Name != "" {
		return sel.Name
	}
	return sel.ID
}

// validate checks what the API schema cannot: that the kubelet
// configuration is one the node's kubelet and AMI family take, that its
// settings parse for the overhead model, and that user data can be generated.
func validate(nc *awsv1.EC2NodeClass, boot userdata.Options, bootErr error) (reason, message string) {
	if errs := awsv1.ValidateKubeletShape(nc.Spec.Kubelet); len(errs) > 0 {
		return "InvalidKubeletConfiguration", errors.Join(errs...).Error()
	}
	if errs := awsv1.ValidateKubeletForFamily(nc.Spec.Kubelet, nc.AMIFamily()); len(errs) > 0 {
		return "UnsupportedKubeletConfiguration", errors.Join(errs...).Error()
	}
	if _, err := capacity.Compute(capacity.Instance{VCPUs: 2, MemoryMiB: 4096, Arch: v1.ArchitectureAmd64, MaxENIs: 3, IPv4PerENI: 10},
		instancetype.KubeletOf(nc.Spec.Kubelet), capacity.Options{Family: instancetype.CapacityFamily(nc.AMIFamily())}); err != nil {
		return "InvalidKubeletConfiguration", err.Error()
	}
	if cidrErr := (*awsprovider.ClusterCIDRError)(nil); errors.As(bootErr, &cidrErr) {
		return "ClusterCIDRResolutionFailed", bootErr.Error()
	} else if bootErr != nil {
		return "InvalidAMIFamily", bootErr.Error()
	}
	ud, err := userdata.Generate(nc.AMIFamily(), boot)
	if err != nil {
		return "InvalidUserData", err.Error()
	}
	// EC2 takes at most 16 KiB of user data before base64.
	if len(ud) > 16*1024 {
		return "UserDataSizeLimitExceeded", fmt.Sprintf("the generated user data is %d bytes; EC2 allows 16384: shorten spec.userData", len(ud))
	}
	return "", ""
}

func setTrue(nc *awsv1.EC2NodeClass, t string) {
	setCondition(nc, t, metav1.ConditionTrue, t, "")
}

func setFalse(nc *awsv1.EC2NodeClass, t, reason, msg string) {
	setCondition(nc, t, metav1.ConditionFalse, reason, msg)
}

func setCondition(nc *awsv1.EC2NodeClass, t string, status metav1.ConditionStatus, reason, msg string) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg, ObservedGeneration: nc.Generation})
}

// readyConditions is Karpenter's condition set for the node class:
// CapacityReservationsReady belongs to it while reserved capacity is on.
func readyConditions(p *awsprovider.Provider) []string {
	if p.Settings().DisableReservedCapacity {
		return v1.EC2NodeClassReadyConditions
	}
	return append(slices.Clone(v1.EC2NodeClassReadyConditions), v1.ConditionTypeCapacityReservationsReady)
}

// awaitingDependencies sets ValidationSucceeded as Karpenter does while a
// part the launch needs is not resolved: False if one is False, else
// Unknown. It reports whether it did.
func awaitingDependencies(nc *awsv1.EC2NodeClass) bool {
	status := metav1.ConditionTrue
	for _, t := range []string{v1.ConditionTypeAMIsReady, v1.ConditionTypeInstanceProfileReady, v1.ConditionTypeSecurityGroupsReady, v1.ConditionTypeSubnetsReady} {
		switch c := meta.FindStatusCondition(nc.Status.Conditions, t); {
		case c != nil && c.Status == metav1.ConditionFalse:
			status = metav1.ConditionFalse
		case (c == nil || c.Status != metav1.ConditionTrue) && status == metav1.ConditionTrue:
			status = metav1.ConditionUnknown
		}
	}
	if status == metav1.ConditionTrue {
		return false
	}
	setCondition(nc, v1.ConditionTypeValidationSucceeded, status, "DependenciesNotReady", "Awaiting AMI, Instance Profile, Security Group, and Subnet resolution")
	return true
}

// karpenterOrder is the order Karpenter's reconcilers set the conditions in.
var karpenterOrder = []string{
	v1.ConditionTypeAMIsReady, v1.ConditionTypeCapacityReservationsReady, v1.ConditionTypePlacementGroupReady,
	v1.ConditionTypeSubnetsReady, v1.ConditionTypeSecurityGroupsReady, v1.ConditionTypeInstanceProfileReady,
	v1.ConditionTypeValidationSucceeded,
}

// latestFirst orders conditions by their last transition, latest first,
// to the second the API server keeps, so a pass over the stored object
// orders as the pass that wrote it. Transitions in the same second order
// as Karpenter's, whose reconcilers set them one after the other: the one
// set last first.
func latestFirst(a, b metav1.Condition) int {
	if c := b.LastTransitionTime.Unix() - a.LastTransitionTime.Unix(); c != 0 {
		return int(c)
	}
	return slices.Index(karpenterOrder, b.Type) - slices.Index(karpenterOrder, a.Type)
}

// setRoot makes Ready the conjunction of conditions as Karpenter's
// condition set does: True when all are True; False when one is False,
// else Unknown; the message lists the others as Type=Status, the latest
// transition first. Each condition's own message says why.
func setRoot(nc *awsv1.EC2NodeClass, conditions []string) {
	var bad []metav1.Condition
	status := metav1.ConditionUnknown
	for _, t := range conditions {
		c := meta.FindStatusCondition(nc.Status.Conditions, t)
		switch {
		case c == nil:
			bad = append(bad, metav1.Condition{Type: t, Status: metav1.ConditionUnknown})
		case c.Status != metav1.ConditionTrue:
			bad = append(bad, *c)
			if c.Status == metav1.ConditionFalse {
				status = metav1.ConditionFalse
			}
		}
	}
	if len(bad) == 0 {
		setTrue(nc, v1.ConditionTypeReady)
		return
	}
	slices.SortStableFunc(bad, latestFirst)
	var parts []string
	for _, c := range bad {
		parts = append(parts, c.Type+"="+string(c.Status))
	}
	reason := "UnhealthyDependents"
	if status == metav1.ConditionUnknown {
		reason = "ReconcilingDependents"
	}
	setCondition(nc, v1.ConditionTypeReady, status, reason, strings.Join(parts, ", "))
}
