package ec2

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// instanceAttributes are the DescribeInstances filters served.
func instanceAttributes(in *instance) attributes {
	return func(name string) ([]string, bool) {
		switch name {
		case "instance-id":
			return []string{*in.InstanceId}, true
		case "instance-state-name":
			return []string{string(in.State.Name)}, true
		case "instance-state-code":
			return []string{strconv.Itoa(int(*in.State.Code))}, true
		case "instance-type":
			return []string{string(in.InstanceType)}, true
		case "availability-zone":
			return []string{*in.Placement.AvailabilityZone}, true
		case "subnet-id":
			return []string{*in.SubnetId}, true
		case "placement-group-name":
			return []string{deref(in.Placement.GroupName)}, true
		case "placement-partition-number":
			if n := in.Placement.PartitionNumber; n != nil {
				return []string{strconv.Itoa(int(*n))}, true
			}
			return nil, true
		case "vpc-id":
			return []string{*in.VpcId}, true
		case "image-id":
			return []string{*in.ImageId}, true
		case "architecture":
			return []string{string(in.Architecture)}, true
		case "private-dns-name":
			return []string{*in.PrivateDnsName}, true
		case "private-ip-address":
			return []string{*in.PrivateIpAddress}, true
		case "reservation-id":
			return []string{in.reservationID}, true
		case "instance-lifecycle":
			return []string{string(in.InstanceLifecycle)}, true
		case "spot-instance-request-id":
			return []string{deref(in.SpotInstanceRequestId)}, true
		case "capacity-reservation-id":
			return []string{deref(in.CapacityReservationId)}, true
		case "iam-instance-profile.arn":
			if in.IamInstanceProfile == nil {
				return nil, true
			}
			return []string{*in.IamInstanceProfile.Arn}, true
		case "instance.group-id", "group-id":
			var ids []string
			for _, g := range in.SecurityGroups {
				ids = append(ids, *g.GroupId)
			}
			return ids, true
		case "launch-time":
			return []string{in.LaunchTime.Format("2006-01-02T15:04:05.000Z")}, true
		}
		return nil, false
	}
}

// visibleInstances returns the instances Describe calls see, checking that
// every named ID is among them. Caller holds s.mu.
func (s *Service) visibleInstances(ids []string) ([]*instance, *protocol.Error) {
	now := time.Now()
	var missing []string
	for _, id := range ids {
		if !strings.HasPrefix(id, "i-") {
			return nil, errorf("InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id)
		}
		if in, ok := s.instances[id]; !ok || !in.visible(now) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, errInstanceNotFound(missing...)
	}
	var out []*instance
	for _, in := range s.order {
		if in.visible(now) && allowed(ids, *in.InstanceId) {
			out = append(out, in)
		}
	}
	return out, nil
}

func (s *Service) describeInstances(in *ec2.DescribeInstancesInput, _ bool) (*ec2.DescribeInstancesOutput, *protocol.Error) {
	if len(in.InstanceIds) > 0 && in.MaxResults != nil {
		return nil, errorf("InvalidParameterCombination", "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.visibleInstances(in.InstanceIds)
	if err != nil {
		return nil, err
	}
	var found []*instance
	for _, i := range all {
		ok, err := matches(in.Filters, i.Tags, instanceAttributes(i))
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, i)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	out := &ec2.DescribeInstancesOutput{Reservations: []ec2types.Reservation{}, NextToken: next}
	for _, i := range found[start:end] {
		n := len(out.Reservations)
		if n == 0 || *out.Reservations[n-1].ReservationId != i.reservationID {
			out.Reservations = append(out.Reservations, ec2types.Reservation{
				ReservationId: ptr(i.reservationID), OwnerId: ptr(s.opts.AccountID), Groups: []ec2types.GroupIdentifier{},
			})
			n++
		}
		out.Reservations[n-1].Instances = append(out.Reservations[n-1].Instances, i.Instance)
	}
	return out, nil
}

func (s *Service) terminateInstances(in *ec2.TerminateInstancesInput, dryRun bool) (*ec2.TerminateInstancesOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.namedInstances(in.InstanceIds); err != nil {
		return nil, err
	}
	if dryRun {
		return nil, nil
	}
	out := &ec2.TerminateInstancesOutput{}
	for _, id := range in.InstanceIds {
		i := s.instances[id]
		prev := s.terminate(i, userReason)
		out.TerminatingInstances = append(out.TerminatingInstances, ec2types.InstanceStateChange{
			InstanceId: ptr(id), PreviousState: &prev, CurrentState: i.State,
		})
	}
	return out, nil
}

func (s *Service) describeInstanceStatus(in *ec2.DescribeInstanceStatusInput, _ bool) (*ec2.DescribeInstanceStatusOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.visibleInstances(in.InstanceIds)
	if err != nil {
		return nil, err
	}
	var found []ec2types.InstanceStatus
	for _, i := range all {
		if !deref(in.IncludeAllInstances) && i.State.Name != ec2types.InstanceStateNameRunning {
			continue
		}
		st := instanceStatus(i)
		ok, err := matches(in.Filters, nil, func(name string) ([]string, bool) {
			switch name {
			case "availability-zone":
				return []string{*st.AvailabilityZone}, true
			case "instance-state-name":
				return []string{string(st.InstanceState.Name)}, true
			case "instance-state-code":
				return []string{strconv.Itoa(int(*st.InstanceState.Code))}, true
			case "instance-status.status":
				return []string{string(st.InstanceStatus.Status)}, true
			case "instance-status.reachability":
				return []string{string(st.InstanceStatus.Details[0].Status)}, true
			case "system-status.status":
				return []string{string(st.SystemStatus.Status)}, true
			case "system-status.reachability":
				return []string{string(st.SystemStatus.Details[0].Status)}, true
			case "event.code":
				var codes []string
				for _, e := range st.Events {
					codes = append(codes, string(e.Code))
				}
				return codes, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, st)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeInstanceStatusOutput{InstanceStatuses: append([]ec2types.InstanceStatus{}, found[start:end]...), NextToken: next}, nil
}

// instanceStatus is an instance's status checks: initializing while pending,
// then ok unless impaired through the Go API.
func instanceStatus(i *instance) ec2types.InstanceStatus {
	summary := func(impaired bool, since time.Time) *ec2types.InstanceStatusSummary {
		status, detail := ec2types.SummaryStatusOk, ec2types.StatusTypePassed
		var impairedSince *time.Time
		switch {
		case i.State.Name != ec2types.InstanceStateNameRunning:
			status, detail = ec2types.SummaryStatusNotApplicable, ec2types.StatusTypeInitializing
		case impaired:
			status, detail = ec2types.SummaryStatusImpaired, ec2types.StatusTypeFailed
			impairedSince = ptr(since)
		}
		return &ec2types.InstanceStatusSummary{Status: status, Details: []ec2types.InstanceStatusDetails{{
			Name: ec2types.StatusNameReachability, Status: detail, ImpairedSince: impairedSince,
		}}}
	}
	return ec2types.InstanceStatus{
		InstanceId: i.InstanceId, AvailabilityZone: i.Placement.AvailabilityZone, AvailabilityZoneId: i.Placement.AvailabilityZoneId,
		InstanceState: i.State, InstanceStatus: summary(i.status.instanceImpaired, i.status.instanceImpairedSince),
		SystemStatus: summary(i.status.systemImpaired, i.status.systemImpairedSince),
		Events:       append([]ec2types.InstanceStatusEvent{}, i.status.events...),
	}
}
