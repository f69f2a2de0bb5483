package ec2

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

// launchTemplate is a stored template: its metadata and its (single) version's data.
type launchTemplate struct {
	meta ec2types.LaunchTemplate
	data ec2types.RequestLaunchTemplateData
}

func (s *Service) createLaunchTemplate(in *ec2.CreateLaunchTemplateInput, dryRun bool) (*ec2.CreateLaunchTemplateOutput, *protocol.Error) {
	name := *in.LaunchTemplateName
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.templateNames[name]; exists {
		return nil, errorf("InvalidLaunchTemplateName.AlreadyExistsException", "Launch template name already in use.")
	}
	if id := deref(in.LaunchTemplateData.ImageId); id != "" && s.imageByID(id) == nil {
		return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
	}
	if dryRun {
		return nil, nil
	}
	lt := &launchTemplate{data: *in.LaunchTemplateData, meta: ec2types.LaunchTemplate{
		LaunchTemplateId:     ptr("lt-" + s.ids.Hex(17)),
		LaunchTemplateName:   ptr(name),
		CreateTime:           ptr(time.Now().UTC().Truncate(time.Second)),
		CreatedBy:            ptr("arn:aws:iam::" + s.opts.AccountID + ":root"),
		DefaultVersionNumber: ptr(int64(1)),
		LatestVersionNumber:  ptr(int64(1)),
		Tags:                 tagsFor(in.TagSpecifications, ec2types.ResourceTypeLaunchTemplate),
	}}
	s.templates[*lt.meta.LaunchTemplateId] = lt
	s.templateNames[name] = *lt.meta.LaunchTemplateId
	return &ec2.CreateLaunchTemplateOutput{LaunchTemplate: &lt.meta}, nil
}

// template finds a launch template by ID or name, with the error EC2 gives
// for each when it does not exist.
func (s *Service) template(id, name string) (*launchTemplate, *protocol.Error) {
	if id != "" {
		if lt, ok := s.templates[id]; ok {
			return lt, nil
		}
		if len(id) < 4 || id[:3] != "lt-" {
			return nil, errorf("InvalidLaunchTemplateId.Malformed", "The specified launch template ID '%s' is malformed.", id)
		}
		return nil, errorf("InvalidLaunchTemplateId.NotFound", "The specified launch template, with template ID %s, does not exist.", id)
	}
	if lid, ok := s.templateNames[name]; ok {
		return s.templates[lid], nil
	}
	return nil, errorf("InvalidLaunchTemplateName.NotFoundException", "The specified launch template, with template name %s, does not exist.", name)
}

func (s *Service) describeLaunchTemplates(in *ec2.DescribeLaunchTemplatesInput, _ bool) (*ec2.DescribeLaunchTemplatesOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.LaunchTemplateIds {
		if _, err := s.template(id, ""); err != nil {
			return nil, err
		}
	}
	for _, n := range in.LaunchTemplateNames {
		if _, err := s.template("", n); err != nil {
			return nil, err
		}
	}
	var found []ec2types.LaunchTemplate
	for _, lt := range s.sortedTemplates() {
		if !allowed(in.LaunchTemplateIds, *lt.meta.LaunchTemplateId) || !allowed(in.LaunchTemplateNames, *lt.meta.LaunchTemplateName) {
			continue
		}
		ok, err := matches(in.Filters, lt.meta.Tags, func(name string) ([]string, bool) {
			switch name {
			case "launch-template-name":
				return []string{*lt.meta.LaunchTemplateName}, true
			case "launch-template-id":
				return []string{*lt.meta.LaunchTemplateId}, true
			case "create-time":
				return []string{lt.meta.CreateTime.Format(time.RFC3339)}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, lt.meta)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeLaunchTemplatesOutput{LaunchTemplates: append([]ec2types.LaunchTemplate{}, found[start:end]...), NextToken: next}, nil
}

func (s *Service) sortedTemplates() []*launchTemplate {
	out := make([]*launchTemplate, 0, len(s.templates))
	for _, lt := range s.templates {
		out = append(out, lt)
	}
	sortBy(out, func(lt *launchTemplate) string { return *lt.meta.LaunchTemplateId })
	return out
}

func (s *Service) deleteLaunchTemplate(in *ec2.DeleteLaunchTemplateInput, dryRun bool) (*ec2.DeleteLaunchTemplateOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if deref(in.LaunchTemplateId) == "" && deref(in.LaunchTemplateName) == "" {
		return nil, errorf("MissingParameter", "The request must contain the parameter LaunchTemplateName or LaunchTemplateId")
	}
	lt, err := s.template(deref(in.LaunchTemplateId), deref(in.LaunchTemplateName))
	if err != nil {
		return nil, err
	}
	if dryRun {
		return nil, nil
	}
	delete(s.templates, *lt.meta.LaunchTemplateId)
	delete(s.templateNames, *lt.meta.LaunchTemplateName)
	return &ec2.DeleteLaunchTemplateOutput{LaunchTemplate: &lt.meta}, nil
}

// LaunchTemplateData returns what a launch template (by ID or name) was created with.
func (s *Service) LaunchTemplateData(idOrName string) (ec2types.RequestLaunchTemplateData, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if lt, ok := s.templates[idOrName]; ok {
		return lt.data, true
	}
	if id, ok := s.templateNames[idOrName]; ok {
		return s.templates[id].data, true
	}
	return ec2types.RequestLaunchTemplateData{}, false
}

// checkVersion accepts the versions a single-version template has.
func checkVersion(v string) *protocol.Error {
	switch v {
	case "", "$Latest", "$Default", "1":
		return nil
	}
	if _, err := strconv.Atoi(v); err == nil {
		return errorf("InvalidLaunchTemplateId.VersionNotFound", "Could not find launch template version %s.", v)
	}
	return errorf("InvalidLaunchTemplateId.VersionNotFound", "The launch template version %q is not valid.", v)
}

// tagsFor collects the tags a request's tag specifications give one resource type.
func tagsFor(specs []ec2types.TagSpecification, rt ec2types.ResourceType) []ec2types.Tag {
	var out []ec2types.Tag
	for _, spec := range specs {
		if spec.ResourceType == rt {
			out = mergeTags(out, spec.Tags)
		}
	}
	return out
}

// launchTemplateTagSpecs converts a launch template's tag specifications
// into a request's.
func launchTemplateTagSpecs(specs []ec2types.LaunchTemplateTagSpecificationRequest) []ec2types.TagSpecification {
	out := make([]ec2types.TagSpecification, len(specs))
	for i, spec := range specs {
		out[i] = ec2types.TagSpecification{ResourceType: spec.ResourceType, Tags: spec.Tags}
	}
	return out
}

// mergeTags returns base with add applied: same keys replaced, new keys appended.
func mergeTags(base, add []ec2types.Tag) []ec2types.Tag {
	out := append([]ec2types.Tag{}, base...)
next:
	for _, t := range add {
		for i := range out {
			if deref(out[i].Key) == deref(t.Key) {
				out[i] = t
				continue next
			}
		}
		out = append(out, t)
	}
	return out
}
