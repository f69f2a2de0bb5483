package iam

import "time"

// role is an IAM role. Fields are guarded by Service.mu.
type role struct {
	name               string
	id                 string
	arn                string
	path               string
	assumeRolePolicy   string
	description        string
	maxSessionDuration int
	boundary           string // permissions boundary policy ARN
	created            time.Time
	tags               tagSet
	inline             map[string]string // policy name -> document
	inlineOrder        []string
	attached           []string // managed policy ARNs in attach order
}

// managedPolicy is a customer or AWS managed policy.
type managedPolicy struct {
	name        string
	id          string
	arn         string
	path        string
	description string
	created     time.Time
	updated     time.Time
	tags        tagSet
	versions    []*policyVersion // in creation order
	defaultID   string
	nextVersion int
	awsManaged  bool
}

type policyVersion struct {
	id       string // "v1", "v2", …
	document string
	created  time.Time
}

// instanceProfile is an instance profile; IAM allows at most one role in it.
type instanceProfile struct {
	name    string
	id      string
	arn     string
	path    string
	created time.Time
	tags    tagSet
	roles   []string // role names
}

func (p *managedPolicy) version(id string) *policyVersion {
	for _, v := range p.versions {
		if v.id == id {
			return v
		}
	}
	return nil
}

func (p *managedPolicy) defaultVersion() *policyVersion { return p.version(p.defaultID) }
