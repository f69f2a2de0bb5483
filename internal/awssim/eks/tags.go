package eks

import (
	"maps"
	"net/http"
)

// taggable returns the tags of the cluster, access entry or association with
// the ARN (the first path label). The caller holds s.mu.
func (s *Service) taggable(c *call) (map[string]string, *restError) {
	arn := c.Args[0]
	for _, cl := range s.clusters {
		if cl.arn == arn {
			return cl.tags, nil
		}
		for _, e := range cl.accesses {
			if e.arn == arn {
				return e.tags, nil
			}
		}
		for _, a := range cl.associations {
			if a.arn == arn {
				return a.tags, nil
			}
		}
	}
	return nil, &restError{Status: http.StatusNotFound, Type: "NotFoundException", Message: "Resource " + arn + " not found."}
}

func (s *Service) tagResource(c *call) (any, *restError) {
	var in struct {
		Tags map[string]string `json:"tags"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tags, err := s.taggable(c)
	if err != nil {
		return nil, err
	}
	maps.Copy(tags, in.Tags)
	return struct{}{}, nil
}

func (s *Service) untagResource(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tags, err := s.taggable(c)
	if err != nil {
		return nil, err
	}
	for _, k := range c.Request.URL.Query()["tagKeys"] {
		delete(tags, k)
	}
	return struct{}{}, nil
}

func (s *Service) listTagsForResource(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tags, err := s.taggable(c)
	if err != nil {
		return nil, err
	}
	return struct {
		Tags map[string]string `json:"tags"`
	}{maps.Clone(tags)}, nil
}
