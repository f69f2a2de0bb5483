package eventbridge

import (
	"maps"
	"slices"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// onTaggedRule decodes a tagging request and runs fn on the rule its
// ResourceARN names.
func (s *Service) onTaggedRule(c *awsjson.Call, in interface{ resourceARN() string }, fn func(r *rule) any) (any, *awsjson.Error) {
	if err := c.Decode(in); err != nil {
		return nil, err
	}
	arn := in.resourceARN()
	name, ok := strings.CutPrefix(arn, "arn:aws:events:"+s.region+":"+s.account+":rule/")
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.rules[name]
	if !ok || r == nil {
		return nil, errRuleNotFound(name)
	}
	return fn(r), nil
}

type resourceRef struct{ ResourceARN string }

func (r *resourceRef) resourceARN() string { return r.ResourceARN }

func (s *Service) tagResource(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		resourceRef
		Tags []tag
	}
	return s.onTaggedRule(c, &in, func(r *rule) any {
		for _, t := range in.Tags {
			r.tags[t.Key] = t.Value
		}
		return nil
	})
}

func (s *Service) untagResource(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		resourceRef
		TagKeys []string
	}
	return s.onTaggedRule(c, &in, func(r *rule) any {
		for _, k := range in.TagKeys {
			delete(r.tags, k)
		}
		return nil
	})
}

func (s *Service) listTagsForResource(c *awsjson.Call) (any, *awsjson.Error) {
	var in resourceRef
	return s.onTaggedRule(c, &in, func(r *rule) any {
		tags := []tag{}
		for _, k := range slices.Sorted(maps.Keys(r.tags)) {
			tags = append(tags, tag{Key: k, Value: r.tags[k]})
		}
		return struct{ Tags []tag }{tags}
	})
}
