package ec2

import (
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

var (
	stateStopping = ec2types.InstanceState{Code: ptr(int32(64)), Name: ec2types.InstanceStateNameStopping}
	stateStopped  = ec2types.InstanceState{Code: ptr(int32(80)), Name: ec2types.InstanceStateNameStopped}
)

// stopInstances stops running EBS-backed instances: stopping, then stopped
// after the shutting-down duration. Spot instances cannot be stopped here
// (EC2 allows it only for persistent requests, which are not simulated).
func (s *Service) stopInstances(in *ec2.StopInstancesInput, dryRun bool) (*ec2.StopInstancesOutput, *protocol.Error) {
	if len(in.InstanceIds) == 0 {
		return nil, errorf("MissingParameter", "The request must contain the parameter InstanceId")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	named, err := s.namedInstances(in.InstanceIds)
	if err != nil {
		return nil, err
	}
	for _, i := range named {
		id := *i.InstanceId
		if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
			return nil, errorf("UnsupportedOperation", "The instance '%s' is a spot instance, which can only be stopped with a persistent request", id)
		}
		switch i.State.Name {
		case ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated:
			return nil, errorf("IncorrectInstanceState", "This instance '%s' is not in a state from which it can be stopped.", id)
		}
	}
	if dryRun {
		return nil, nil
	}
	out := &ec2.StopInstancesOutput{}
	for _, id := range in.InstanceIds {
		i := s.instances[id]
		prev := *i.State
		if prev.Name == ec2types.InstanceStateNamePending || prev.Name == ec2types.InstanceStateNameRunning {
			if i.timer != nil {
				i.timer.Stop()
			}
			i.StateTransitionReason = ptr("User initiated (" + time.Now().UTC().Format("2006-01-02 15:04:05 MST") + ")")
			s.setState(i, stateStopping)
			i.timer = time.AfterFunc(s.opts.ShuttingDownDuration, func() { s.transition(id, stateStopping, stateStopped) })
		}
		out.StoppingInstances = append(out.StoppingInstances, ec2types.InstanceStateChange{
			InstanceId: ptr(id), PreviousState: &prev, CurrentState: i.State,
		})
	}
	return out, nil
}

// namedInstances returns the instances with these IDs, visible or not (an
// action on an instance does not wait for Describe calls to see it), or the
// error for the first malformed or unknown ID. Caller holds s.mu.
func (s *Service) namedInstances(ids []string) ([]*instance, *protocol.Error) {
	out := make([]*instance, 0, len(ids))
	var missing []string
	for _, id := range ids {
		if !strings.HasPrefix(id, "i-") {
			return nil, errorf("InvalidInstanceID.Malformed", "Invalid id: \"%s\"", id)
		}
		i, ok := s.instances[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		out = append(out, i)
	}
	if len(missing) > 0 {
		return nil, errInstanceNotFound(missing...)
	}
	return out, nil
}
