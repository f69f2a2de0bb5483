package sqs

import (
	"maps"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

func (s *Service) tagQueue(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		Tags map[string]string
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		maps.Copy(q.tags, in.Tags)
		return nil, nil
	})
}

func (s *Service) untagQueue(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		TagKeys []string
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		for _, k := range in.TagKeys {
			delete(q.tags, k)
		}
		return nil, nil
	})
}

func (s *Service) listQueueTags(c *awsjson.Call) (any, *awsjson.Error) {
	var in queueRef
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return struct {
			Tags map[string]string `json:",omitempty"`
		}{maps.Clone(q.tags)}, nil
	})
}
