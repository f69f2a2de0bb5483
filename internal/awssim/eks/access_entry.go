package eks

import (
	"maps"
	"slices"
	"time"
)

// accessEntry grants an IAM principal access to a cluster.
type accessEntry struct {
	principalARN     string
	arn              string
	entryType        string
	username         string
	kubernetesGroups []string
	tags             map[string]string
	created          time.Time
	modified         time.Time
}

var accessEntryTypes = []string{"STANDARD", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX", "HYBRID_LINUX", "EC2"}

type accessEntryJSON struct {
	ClusterName      string            `json:"clusterName"`
	PrincipalArn     string            `json:"principalArn"`
	KubernetesGroups []string          `json:"kubernetesGroups"`
	AccessEntryArn   string            `json:"accessEntryArn"`
	CreatedAt        float64           `json:"createdAt"`
	ModifiedAt       float64           `json:"modifiedAt"`
	Tags             map[string]string `json:"tags"`
	Username         string            `json:"username"`
	Type             string            `json:"type"`
}

type accessEntryResult struct {
	AccessEntry accessEntryJSON `json:"accessEntry"`
}

func (e *accessEntry) render(clusterName string) accessEntryResult {
	return accessEntryResult{accessEntryJSON{
		ClusterName:      clusterName,
		PrincipalArn:     e.principalARN,
		KubernetesGroups: slices.Clone(nonNil(e.kubernetesGroups)),
		AccessEntryArn:   e.arn,
		CreatedAt:        epoch(e.created),
		ModifiedAt:       epoch(e.modified),
		Tags:             maps.Clone(e.tags),
		Username:         e.username,
		Type:             e.entryType,
	}}
}

// defaultUsername is the Kubernetes user EKS maps a principal to when the
// entry names none.
func (s *Service) defaultUsername(entryType, arn string, p principal) string {
	switch {
	case entryType == "EC2_LINUX" || entryType == "EC2_WINDOWS" || entryType == "EC2":
		return "system:node:{{EC2PrivateDNSName}}"
	case p.kind == "role":
		return "arn:aws:sts::" + s.account + ":assumed-role/" + p.name + "/{{SessionName}}"
	default:
		return arn
	}
}

// nodeEntryTypes are the types for which EKS manages groups and username.
func nodeEntryType(t string) bool { return t != "STANDARD" }

func (s *Service) createAccessEntry(c *call) (any, *restError) {
	var in struct {
		PrincipalArn     string            `json:"principalArn"`
		KubernetesGroups []string          `json:"kubernetesGroups"`
		Tags             map[string]string `json:"tags"`
		Username         string            `json:"username"`
		Type             string            `json:"type"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.Type == "" {
		in.Type = "STANDARD"
	}
	if !slices.Contains(accessEntryTypes, in.Type) {
		return nil, errInvalidParameter("The type "+in.Type+" is not a valid access entry type.", nil)
	}
	if nodeEntryType(in.Type) && (len(in.KubernetesGroups) > 0 || in.Username != "") {
		return nil, errInvalidParameter("kubernetesGroups and username cannot be specified for access entries of type "+in.Type+".", nil)
	}
	p, ok := s.parsePrincipal(in.PrincipalArn)
	if !ok {
		return nil, errInvalidParameter("The specified principalArn is invalid: invalid principal.", nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	if cl.accesses[in.PrincipalArn] != nil {
		return nil, errInUse("The specified access entry resource is already in use on this cluster.", map[string]string{"clusterName": cl.spec.Name})
	}
	groups := in.KubernetesGroups
	if in.Type == "EC2_LINUX" || in.Type == "EC2_WINDOWS" {
		groups = []string{"system:nodes"}
	}
	username := in.Username
	if username == "" {
		username = s.defaultUsername(in.Type, in.PrincipalArn, p)
	}
	now := s.now()
	e := &accessEntry{
		principalARN:     in.PrincipalArn,
		arn:              s.arn("access-entry/" + cl.spec.Name + "/" + p.kind + "/" + s.account + "/" + p.name + "/" + s.ids.Hex(36)),
		entryType:        in.Type,
		username:         username,
		kubernetesGroups: groups,
		tags:             nonNilMap(in.Tags),
		created:          now,
		modified:         now,
	}
	cl.accesses[in.PrincipalArn] = e
	return e.render(cl.spec.Name), nil
}

// entryArg returns the access entry named by the cluster and principal
// labels. The caller holds s.mu.
func (s *Service) entryArg(c *call) (*cluster, *accessEntry, *restError) {
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, nil, err
	}
	e := cl.accesses[c.Args[1]]
	if e == nil {
		return nil, nil, errNotFound("The specified principalArn could not be found. You can view your available access entries with 'list-access-entries'.",
			map[string]string{"clusterName": cl.spec.Name})
	}
	return cl, e, nil
}

func (s *Service) describeAccessEntry(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, e, err := s.entryArg(c)
	if err != nil {
		return nil, err
	}
	return e.render(cl.spec.Name), nil
}

func (s *Service) updateAccessEntry(c *call) (any, *restError) {
	var in struct {
		KubernetesGroups []string `json:"kubernetesGroups"`
		Username         string   `json:"username"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, e, err := s.entryArg(c)
	if err != nil {
		return nil, err
	}
	if nodeEntryType(e.entryType) && (in.KubernetesGroups != nil || in.Username != "") {
		return nil, errInvalidParameter("kubernetesGroups and username cannot be updated for access entries of type "+e.entryType+".", nil)
	}
	if in.KubernetesGroups != nil {
		e.kubernetesGroups = in.KubernetesGroups
	}
	if in.Username != "" {
		e.username = in.Username
	}
	e.modified = s.now()
	return e.render(cl.spec.Name), nil
}

func (s *Service) deleteAccessEntry(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, e, err := s.entryArg(c)
	if err != nil {
		return nil, err
	}
	delete(cl.accesses, e.principalARN)
	return struct{}{}, nil
}

func (s *Service) listAccessEntries(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	return struct {
		AccessEntries []string `json:"accessEntries"`
	}{slices.Sorted(maps.Keys(cl.accesses))}, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
