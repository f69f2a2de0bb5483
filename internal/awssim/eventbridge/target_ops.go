package eventbridge

import (
	"encoding/json"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// maxTargets is EventBridge's limit of targets per rule.
const maxTargets = 5

// targetsRef is the Rule/EventBusName pair of the target operations.
type targetsRef struct{ Rule, EventBusName string }

func (r *targetsRef) ruleName() string { return r.Rule }
func (r *targetsRef) busName() string  { return r.EventBusName }

type failedEntry struct {
	TargetId     string
	ErrorCode    string
	ErrorMessage string
}

type failedEntries struct {
	FailedEntryCount int
	FailedEntries    []failedEntry
}

func (s *Service) putTargets(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		targetsRef
		Targets []json.RawMessage
	}
	return s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		var parsed []*target
		for _, raw := range in.Targets {
			var t struct{ Id, Arn, Input, InputPath string }
			if err := json.Unmarshal(raw, &t); err != nil {
				return nil, awsjson.SerializationError(err.Error())
			}
			if !namePattern.MatchString(t.Id) {
				return nil, errValidation("1 validation error detected: Value '%s' at 'targets.id' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_A-Za-z0-9]+", t.Id)
			}
			if t.Arn == "" {
				return nil, errValidation("1 validation error detected: Value null at 'targets.arn' failed to satisfy constraint: Member must not be null")
			}
			parsed = append(parsed, &target{id: t.Id, arn: t.Arn, input: t.Input, inputPath: t.InputPath, raw: raw})
		}
		added := 0
		for _, t := range parsed {
			if r.findTarget(t.id) < 0 {
				added++
			}
		}
		if len(r.targets)+added > maxTargets {
			return nil, clientError("LimitExceededException", "The requested resource exceeds the maximum number allowed.")
		}
		for _, t := range parsed {
			if i := r.findTarget(t.id); i >= 0 {
				r.targets[i] = t
			} else {
				r.targets = append(r.targets, t)
			}
		}
		return failedEntries{FailedEntries: []failedEntry{}}, nil
	})
}

func (s *Service) removeTargets(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		targetsRef
		Ids   []string
		Force bool
	}
	return s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		for _, id := range in.Ids {
			if i := r.findTarget(id); i >= 0 {
				r.targets = append(r.targets[:i], r.targets[i+1:]...)
			}
		}
		return failedEntries{FailedEntries: []failedEntry{}}, nil
	})
}

func (s *Service) listTargetsByRule(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		targetsRef
		Limit     int
		NextToken string
	}
	return s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		targets := make([]json.RawMessage, 0, len(r.targets))
		for _, t := range r.targets {
			targets = append(targets, t.raw)
		}
		return struct{ Targets []json.RawMessage }{targets}, nil
	})
}
