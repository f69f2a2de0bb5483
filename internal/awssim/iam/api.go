package iam

// Role is a role as other simulated services see it.
type Role struct {
	Name                     string
	ARN                      string
	ID                       string
	Path                     string
	AssumeRolePolicyDocument string
}

// InstanceProfile is an instance profile as other simulated services (EC2
// RunInstances) see it.
type InstanceProfile struct {
	Name  string
	ARN   string
	ID    string
	Roles []string // role names; at most one
}

// Role returns the named role.
func (s *Service) Role(name string) (Role, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.roles[name]
	if r == nil {
		return Role{}, false
	}
	return r.public(), true
}

func (r *role) public() Role {
	return Role{Name: r.name, ARN: r.arn, ID: r.id, Path: r.path, AssumeRolePolicyDocument: r.assumeRolePolicy}
}

// RoleByARN returns the role with the ARN.
func (s *Service) RoleByARN(arn string) (Role, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.roles {
		if r.arn == arn {
			return r.public(), true
		}
	}
	return Role{}, false
}

// InstanceProfile returns the instance profile with the name or, when
// nameOrARN is an ARN, with that ARN — the two ways EC2 accepts one.
func (s *Service) InstanceProfile(nameOrARN string) (InstanceProfile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.instanceProfiles {
		if p.name == nameOrARN || p.arn == nameOrARN {
			return InstanceProfile{Name: p.name, ARN: p.arn, ID: p.id, Roles: append([]string(nil), p.roles...)}, true
		}
	}
	return InstanceProfile{}, false
}
