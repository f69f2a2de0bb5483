package eventbridge

import (
	"maps"
	"slices"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// ruleInput is an input naming one rule on a bus.
type ruleInput interface {
	ruleName() string
	busName() string
}

// ruleRef is the Name/EventBusName pair of the rule operations.
type ruleRef struct{ Name, EventBusName string }

func (r *ruleRef) ruleName() string { return r.Name }
func (r *ruleRef) busName() string  { return r.EventBusName }

// onRule decodes the request into in and runs fn with s.mu held on the rule
// it names.
func (s *Service) onRule(c *awsjson.Call, in ruleInput, fn func(r *rule) (any, *awsjson.Error)) (any, *awsjson.Error) {
	if err := c.Decode(in); err != nil {
		return nil, err
	}
	if !s.busOK(in.busName()) {
		return nil, clientError("ResourceNotFoundException", "Event bus %s does not exist.", in.busName())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rules[in.ruleName()]
	if r == nil {
		return nil, errRuleNotFound(in.ruleName())
	}
	return fn(r)
}

type tag struct {
	Key   string
	Value string
}

type putRuleInput struct {
	ruleRef
	EventPattern       string
	ScheduleExpression string
	State              string
	Description        string
	RoleArn            string
	Tags               []tag
}

func (s *Service) putRule(c *awsjson.Call) (any, *awsjson.Error) {
	var in putRuleInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if !namePattern.MatchString(in.Name) {
		return nil, errValidation("1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_A-Za-z0-9]+ and have length 1 to 64", in.Name)
	}
	if !s.busOK(in.EventBusName) {
		return nil, clientError("ResourceNotFoundException", "Event bus %s does not exist.", in.EventBusName)
	}
	if in.EventPattern == "" && in.ScheduleExpression == "" {
		return nil, errValidation("Parameter(s) EventPattern or ScheduleExpression must be specified.")
	}
	if in.State == "" {
		in.State = "ENABLED"
	}
	var pattern *Pattern
	if in.EventPattern != "" {
		p, err := CompilePattern(in.EventPattern)
		if err != nil {
			return nil, clientError("InvalidEventPatternException", "%s", err.Error())
		}
		pattern = p
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rules[in.Name]
	if r == nil {
		// Tags are applied only when the rule is created.
		r = &rule{name: in.Name, arn: s.ruleARN(in.Name), tags: map[string]string{}}
		for _, t := range in.Tags {
			r.tags[t.Key] = t.Value
		}
		s.rules[in.Name] = r
	}
	// PutRule replaces the definition; omitted fields do not keep old values.
	r.eventPattern, r.pattern = in.EventPattern, pattern
	r.schedule = in.ScheduleExpression
	r.state = in.State
	r.description = in.Description
	r.roleARN = in.RoleArn
	return struct{ RuleArn string }{r.arn}, nil
}

// ruleView is a rule as DescribeRule and ListRules show it.
type ruleView struct {
	Name               string
	Arn                string
	EventPattern       string `json:",omitempty"`
	ScheduleExpression string `json:",omitempty"`
	State              string
	Description        string `json:",omitempty"`
	RoleArn            string `json:",omitempty"`
	EventBusName       string
	CreatedBy          string `json:",omitempty"`
}

func (s *Service) view(r *rule) ruleView {
	return ruleView{
		Name:               r.name,
		Arn:                r.arn,
		EventPattern:       r.eventPattern,
		ScheduleExpression: r.schedule,
		State:              r.state,
		Description:        r.description,
		RoleArn:            r.roleARN,
		EventBusName:       defaultBus,
	}
}

func (s *Service) describeRule(c *awsjson.Call) (any, *awsjson.Error) {
	var in ruleRef
	return s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		v := s.view(r)
		v.CreatedBy = s.account
		return v, nil
	})
}

// deleteRule removes a rule. Deleting a rule that does not exist succeeds;
// deleting one that still has targets fails, as in EventBridge.
func (s *Service) deleteRule(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		ruleRef
		Force bool
	}
	_, err := s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		if len(r.targets) > 0 {
			return nil, errValidation("Rule can't be deleted since it has targets.")
		}
		delete(s.rules, r.name)
		return nil, nil
	})
	if err != nil && err.Type == "ResourceNotFoundException" && strings.HasPrefix(err.Message, "Rule ") {
		return nil, nil
	}
	return nil, err
}

func (s *Service) setState(c *awsjson.Call, state string) (any, *awsjson.Error) {
	var in ruleRef
	return s.onRule(c, &in, func(r *rule) (any, *awsjson.Error) {
		r.state = state
		return nil, nil
	})
}

func (s *Service) enableRule(c *awsjson.Call) (any, *awsjson.Error) { return s.setState(c, "ENABLED") }
func (s *Service) disableRule(c *awsjson.Call) (any, *awsjson.Error) {
	return s.setState(c, "DISABLED")
}

func (s *Service) listRules(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		NamePrefix   string
		EventBusName string
		Limit        int
		NextToken    string
	}
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if !s.busOK(in.EventBusName) {
		return nil, clientError("ResourceNotFoundException", "Event bus %s does not exist.", in.EventBusName)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := slices.Sorted(maps.Keys(s.rules))
	out := struct {
		Rules     []ruleView
		NextToken string `json:",omitempty"`
	}{Rules: []ruleView{}}
	for _, name := range names {
		if !strings.HasPrefix(name, in.NamePrefix) || (in.NextToken != "" && name < in.NextToken) {
			continue
		}
		if in.Limit > 0 && len(out.Rules) == in.Limit {
			out.NextToken = name
			break
		}
		out.Rules = append(out.Rules, s.view(s.rules[name]))
	}
	return out, nil
}
