package eks

import (
	"maps"
	"slices"
	"time"
)

// podIdentityAssociation maps a service account to an IAM role.
type podIdentityAssociation struct {
	id                 string
	arn                string
	namespace          string
	serviceAccount     string
	roleARN            string
	targetRoleARN      string
	disableSessionTags bool
	tags               map[string]string
	created            time.Time
	modified           time.Time
}

type associationJSON struct {
	ClusterName        string            `json:"clusterName"`
	Namespace          string            `json:"namespace"`
	ServiceAccount     string            `json:"serviceAccount"`
	RoleArn            string            `json:"roleArn"`
	AssociationArn     string            `json:"associationArn"`
	AssociationID      string            `json:"associationId"`
	Tags               map[string]string `json:"tags"`
	CreatedAt          float64           `json:"createdAt"`
	ModifiedAt         float64           `json:"modifiedAt"`
	DisableSessionTags bool              `json:"disableSessionTags"`
	TargetRoleArn      string            `json:"targetRoleArn,omitempty"`
}

type associationResult struct {
	Association associationJSON `json:"association"`
}

func (a *podIdentityAssociation) render(clusterName string) associationResult {
	return associationResult{associationJSON{
		ClusterName:        clusterName,
		Namespace:          a.namespace,
		ServiceAccount:     a.serviceAccount,
		RoleArn:            a.roleARN,
		AssociationArn:     a.arn,
		AssociationID:      a.id,
		Tags:               maps.Clone(a.tags),
		CreatedAt:          epoch(a.created),
		ModifiedAt:         epoch(a.modified),
		DisableSessionTags: a.disableSessionTags,
		TargetRoleArn:      a.targetRoleARN,
	}}
}

func (s *Service) createPodIdentityAssociation(c *call) (any, *restError) {
	var in struct {
		Namespace          string            `json:"namespace"`
		ServiceAccount     string            `json:"serviceAccount"`
		RoleArn            string            `json:"roleArn"`
		TargetRoleArn      string            `json:"targetRoleArn"`
		DisableSessionTags bool              `json:"disableSessionTags"`
		Tags               map[string]string `json:"tags"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.Namespace == "" || in.ServiceAccount == "" {
		return nil, errInvalidParameter("namespace and serviceAccount are required.", nil)
	}
	if p, ok := s.parsePrincipal(in.RoleArn); !ok || p.kind != "role" {
		return nil, errInvalidParameter("Role provided in the request does not exist.", nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	for _, a := range cl.associations {
		if a.namespace == in.Namespace && a.serviceAccount == in.ServiceAccount {
			return nil, errInUse("Association already exists: "+a.arn, map[string]string{"clusterName": cl.spec.Name})
		}
	}
	id := "a-" + s.ids.Hex(17)
	now := s.now()
	a := &podIdentityAssociation{
		id:                 id,
		arn:                s.arn("podidentityassociation/" + cl.spec.Name + "/" + id),
		namespace:          in.Namespace,
		serviceAccount:     in.ServiceAccount,
		roleARN:            in.RoleArn,
		targetRoleARN:      in.TargetRoleArn,
		disableSessionTags: in.DisableSessionTags,
		tags:               nonNilMap(in.Tags),
		created:            now,
		modified:           now,
	}
	cl.associations[id] = a
	return a.render(cl.spec.Name), nil
}

// associationArg returns the association named by the cluster and ID
// labels. The caller holds s.mu.
func (s *Service) associationArg(c *call) (*cluster, *podIdentityAssociation, *restError) {
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, nil, err
	}
	a := cl.associations[c.Args[1]]
	if a == nil {
		return nil, nil, errNotFound("Association "+c.Args[1]+" not found.", map[string]string{"clusterName": cl.spec.Name})
	}
	return cl, a, nil
}

func (s *Service) describePodIdentityAssociation(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, a, err := s.associationArg(c)
	if err != nil {
		return nil, err
	}
	return a.render(cl.spec.Name), nil
}

func (s *Service) updatePodIdentityAssociation(c *call) (any, *restError) {
	var in struct {
		RoleArn string `json:"roleArn"`
	}
	if err := c.decode(&in); err != nil {
		return nil, err
	}
	if in.RoleArn != "" {
		if p, ok := s.parsePrincipal(in.RoleArn); !ok || p.kind != "role" {
			return nil, errInvalidParameter("Role provided in the request does not exist.", nil)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, a, err := s.associationArg(c)
	if err != nil {
		return nil, err
	}
	if in.RoleArn != "" {
		a.roleARN = in.RoleArn
	}
	a.modified = s.now()
	return a.render(cl.spec.Name), nil
}

func (s *Service) deletePodIdentityAssociation(c *call) (any, *restError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, a, err := s.associationArg(c)
	if err != nil {
		return nil, err
	}
	delete(cl.associations, a.id)
	return a.render(cl.spec.Name), nil
}

type associationSummaryJSON struct {
	ClusterName    string `json:"clusterName"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	AssociationArn string `json:"associationArn"`
	AssociationID  string `json:"associationId"`
}

// listPodIdentityAssociations lists a cluster's associations, filtered by
// the namespace and serviceAccount query parameters.
func (s *Service) listPodIdentityAssociations(c *call) (any, *restError) {
	query := c.Request.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	cl, err := s.clusterArg(c)
	if err != nil {
		return nil, err
	}
	out := struct {
		Associations []associationSummaryJSON `json:"associations"`
	}{Associations: []associationSummaryJSON{}}
	for _, id := range slices.Sorted(maps.Keys(cl.associations)) {
		a := cl.associations[id]
		if ns := query.Get("namespace"); ns != "" && ns != a.namespace {
			continue
		}
		if sa := query.Get("serviceAccount"); sa != "" && sa != a.serviceAccount {
			continue
		}
		out.Associations = append(out.Associations, associationSummaryJSON{
			ClusterName: cl.spec.Name, Namespace: a.namespace, ServiceAccount: a.serviceAccount,
			AssociationArn: a.arn, AssociationID: a.id,
		})
	}
	return out, nil
}
