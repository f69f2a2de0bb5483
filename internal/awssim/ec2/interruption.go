package ec2

import (
	"fmt"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// InterruptSpot reclaims a spot instance the way EC2 does: an "EC2 Spot
// Instance Interruption Warning" now, termination after the notice
// (Options.SpotInterruptionNotice when notice is 0).
func (s *Service) InterruptSpot(id string, notice time.Duration) error {
	if notice <= 0 {
		notice = s.opts.SpotInterruptionNotice
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.liveInstance(id)
	if err != nil {
		return err
	}
	if in.InstanceLifecycle != ec2types.InstanceLifecycleTypeSpot {
		return fmt.Errorf("instance %s is on-demand; only spot instances are reclaimed", id)
	}
	s.events.event(Event{
		Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning", Time: time.Now().UTC(),
		Resources: []string{s.instanceARN(id)},
		Detail:    map[string]any{"instance-id": id, "instance-action": "terminate"},
	})
	if t := s.terminationTimer[id]; t != nil {
		t.Stop()
	}
	s.terminationTimer[id] = time.AfterFunc(notice, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.terminationTimer, id)
		if in, ok := s.instances[id]; ok {
			s.terminate(in, spotReclaimReason)
		}
	})
	return nil
}

// RecommendRebalance emits an "EC2 Instance Rebalance Recommendation" for a
// spot instance; nothing else happens to it.
func (s *Service) RecommendRebalance(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.liveInstance(id); err != nil {
		return err
	}
	s.events.event(Event{
		Source: "aws.ec2", DetailType: "EC2 Instance Rebalance Recommendation", Time: time.Now().UTC(),
		Resources: []string{s.instanceARN(id)},
		Detail:    map[string]any{"instance-id": id},
	})
	return nil
}

// ScheduleChange announces an AWS Health scheduled change (instance
// retirement) for instances, as an "AWS Health Event", and lists it among
// their DescribeInstanceStatus events.
func (s *Service) ScheduleChange(ids []string, start time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var entities []map[string]any
	var arns []string
	for _, id := range ids {
		in, err := s.liveInstance(id)
		if err != nil {
			return err
		}
		entities = append(entities, map[string]any{"entityValue": id})
		arns = append(arns, s.instanceARN(id))
		in.status.events = append(in.status.events, ec2types.InstanceStatusEvent{
			Code: ec2types.EventCodeInstanceRetirement, InstanceEventId: ptr("instance-event-" + s.ids.Hex(17)),
			Description: ptr("The instance is running on degraded hardware"), NotBefore: ptr(start.UTC()),
		})
	}
	arn := "arn:aws:health:" + s.opts.Region + "::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_" + s.ids.Hex(12)
	s.events.event(Event{
		Source: "aws.health", DetailType: "AWS Health Event", Time: time.Now().UTC(), Resources: arns,
		Detail: map[string]any{
			"eventArn": arn, "service": "EC2", "eventTypeCode": "AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED",
			"eventTypeCategory": "scheduledChange", "startTime": start.UTC().Format(time.RFC1123),
			"eventDescription": []map[string]any{{"language": "en_US", "latestDescription": "EC2 has detected degradation of the underlying hardware hosting your instance."}},
			"affectedEntities": entities,
		},
	})
	return nil
}

// EndScheduledEvents marks the instance's scheduled events completed, or
// canceled, as EC2 does: the event stays listed by DescribeInstanceStatus
// for a while, its description starting with [Completed] or [Canceled].
func (s *Service) EndScheduledEvents(id string, canceled bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok {
		return fmt.Errorf("instance %s does not exist", id)
	}
	mark := "[Completed] "
	if canceled {
		mark = "[Canceled] "
	}
	for i := range in.status.events {
		e := &in.status.events[i]
		d := ""
		if e.Description != nil {
			d = *e.Description
		}
		e.Description = ptr(mark + d)
	}
	return nil
}

// SetImpaired sets the instance and system status checks DescribeInstanceStatus reports.
func (s *Service) SetImpaired(id string, instanceCheck, systemCheck bool) error {
	return s.SetImpairedSince(id, instanceCheck, systemCheck, time.Now())
}

// SetImpairedSince is SetImpaired for checks that began failing at since
// (EC2's ImpairedSince); a check already failing keeps its earlier time.
func (s *Service) SetImpairedSince(id string, instanceCheck, systemCheck bool, since time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, err := s.liveInstance(id)
	if err != nil {
		return err
	}
	mark := func(impaired bool, at *time.Time) {
		switch {
		case !impaired:
			*at = time.Time{}
		case at.IsZero():
			*at = since.UTC().Truncate(time.Second)
		}
	}
	mark(instanceCheck, &in.status.instanceImpairedSince)
	mark(systemCheck, &in.status.systemImpairedSince)
	in.status.instanceImpaired, in.status.systemImpaired = instanceCheck, systemCheck
	return nil
}

// liveInstance finds an instance that is pending or running. Caller holds s.mu.
func (s *Service) liveInstance(id string) (*instance, error) {
	in, ok := s.instances[id]
	if !ok {
		return nil, fmt.Errorf("instance %s does not exist", id)
	}
	if n := in.State.Name; n != ec2types.InstanceStateNamePending && n != ec2types.InstanceStateNameRunning {
		return nil, fmt.Errorf("instance %s is %s", id, n)
	}
	return in, nil
}
