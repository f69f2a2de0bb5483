// Package audit evaluates recorded AWS calls against the controller policy
// as IAM would: each call becomes the authorization checks IAM makes for it
// (action, resource ARN, condition keys), with resource tags read through
// the AWS API while the resources exist. Tests use it on the calls the
// runtime made against awssim.
package audit

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

// Audit answers what IAM knows when it authorizes: the tags of existing
// resources, snapshotted while they exist through the AWS API.
type Audit struct {
	ec2      *ec2.Client
	iam      *iam.Client
	region   string
	account  string
	nodeRole string
	tags     map[string]map[string]string // resource ARN -> tags
	names    map[string]string            // launch template name -> ID
}

// New audits calls in cfg's region and account, where instances are
// launched with nodeRole (a role name). cfg reads the resources' tags.
func New(cfg aws.Config, account, nodeRole string) *Audit {
	return &Audit{
		ec2: ec2.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg),
		region: cfg.Region, account: account, nodeRole: nodeRole,
		tags: map[string]map[string]string{}, names: map[string]string{},
	}
}

func (w *Audit) arn(kind, id string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", w.region, w.account, kind, id)
}

// Snapshot records the tags of launch templates, instances and instance
// profiles as they are now. Take one while the resources a later check
// needs still exist; an instance keeps the first tags seen, which are the
// ones its tagging calls saw.
func (w *Audit) Snapshot(ctx context.Context) error {
	c := w.ec2
	lts, err := c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		return err
	}
	for _, lt := range lts.LaunchTemplates {
		m := map[string]string{}
		for _, tag := range lt.Tags {
			m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		w.tags[w.arn("launch-template", aws.ToString(lt.LaunchTemplateId))] = m
		w.names[aws.ToString(lt.LaunchTemplateName)] = aws.ToString(lt.LaunchTemplateId)
	}
	ins, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		return err
	}
	for _, r := range ins.Reservations {
		for _, i := range r.Instances {
			m := map[string]string{}
			for _, tag := range i.Tags {
				m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
			// Tags added later (post-registration) are not there at first;
			// keep the earliest view, which is what the tagging call saw.
			if _, ok := w.tags[w.arn("instance", aws.ToString(i.InstanceId))]; !ok {
				w.tags[w.arn("instance", aws.ToString(i.InstanceId))] = m
			}
		}
	}
	profiles, err := w.iam.ListInstanceProfiles(ctx, &iam.ListInstanceProfilesInput{})
	if err != nil {
		return err
	}
	for _, p := range profiles.InstanceProfiles {
		m := map[string]string{}
		for _, tag := range p.Tags {
			m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		if len(m) == 0 {
			got, err := w.iam.ListInstanceProfileTags(ctx, &iam.ListInstanceProfileTagsInput{InstanceProfileName: p.InstanceProfileName})
			if err != nil {
				return err
			}
			for _, tag := range got.Tags {
				m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
		}
		w.tags["instance-profile:"+aws.ToString(p.InstanceProfileName)] = m
		w.tags["instance-profile-arn:"+aws.ToString(p.InstanceProfileName)] = map[string]string{"arn": aws.ToString(p.Arn)}
	}
	return nil
}

// indexed collects query parameters prefix.N.suffix in N order.
func indexed(params map[string]any, prefix, suffix string) []string {
	re := regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + `\.(\d+)` + regexp.QuoteMeta(suffix) + "$")
	type kv struct {
		n int
		v string
	}
	var out []kv
	for k, v := range params {
		if m := re.FindStringSubmatch(k); m != nil {
			var n int
			fmt.Sscan(m[1], &n)
			out = append(out, kv{n, fmt.Sprint(v)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n < out[j].n })
	vals := make([]string, len(out))
	for i, e := range out {
		vals[i] = e.v
	}
	return vals
}

// tagSpecs reads TagSpecification.N from query parameters: resource type -> tags.
func tagSpecs(params map[string]any) map[string]map[string]string {
	out := map[string]map[string]string{}
	for i, rt := range indexed(params, "TagSpecification", ".ResourceType") {
		p := fmt.Sprintf("TagSpecification.%d.Tag", i+1)
		keys, vals := indexed(params, p, ".Key"), indexed(params, p, ".Value")
		m := map[string]string{}
		for j := range keys {
			m[keys[j]] = vals[j]
		}
		out[rt] = m
	}
	return out
}

func requestContext(tags map[string]string) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range tags {
		ctx["aws:RequestTag/"+k] = []string{v}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	return ctx
}

func resourceContext(ctx map[string][]string, tags map[string]string) map[string][]string {
	if ctx == nil {
		ctx = map[string][]string{}
	}
	for k, v := range tags {
		ctx["aws:ResourceTag/"+k] = []string{v}
	}
	return ctx
}

// Call is a recorded AWS request: the service's signing name, the
// operation and its parameters as the wire protocol carried them (EC2 and
// IAM query parameters, e.g. TagSpecification.1.Tag.1.Key).
type Call struct {
	Service, Operation string
	Parameters         map[string]any
}

// Checks lists the authorization checks IAM makes for a call: the action
// on each resource it touches, with the condition keys IAM would see
// (request tags, resource tags from the snapshots, region, passed role).
// Nil means the call is not modelled.
func (w *Audit) Checks(r Call) []policy.Request {
	action := policy.ActionOf(r.Service, r.Operation)
	p := r.Parameters
	region := map[string][]string{"aws:RequestedRegion": {w.region}}
	str := func(k string) string { return fmt.Sprint(p[k]) }
	profileARN := func() string { return w.tags["instance-profile-arn:"+str("InstanceProfileName")]["arn"] }
	profileTags := func() map[string]string { return w.tags["instance-profile:"+str("InstanceProfileName")] }
	switch {
	case r.Service == "ec2" && strings.HasPrefix(r.Operation, "Describe"):
		return []policy.Request{{Action: action, Resource: "*", Context: region}}
	case action == "ec2:CreateLaunchTemplate":
		tags := tagSpecs(p)["launch-template"]
		// A template deleted before the next snapshot is known by the name
		// and tags it was created with.
		w.tags["launch-template-name:"+str("LaunchTemplateName")] = tags
		return []policy.Request{
			{Action: action, Resource: w.arn("launch-template", "*"), Context: requestContext(tags)},
			{Action: "ec2:CreateTags", Resource: w.arn("launch-template", "*"), Context: mergeCtx(requestContext(tags), map[string][]string{"ec2:CreateAction": {"CreateLaunchTemplate"}})},
		}
	case action == "ec2:CreateFleet":
		var out []policy.Request
		for rt, tags := range tagSpecs(p) {
			res := w.arn(rt, "*")
			out = append(out,
				policy.Request{Action: "ec2:CreateFleet", Resource: res, Context: requestContext(tags)},
				policy.Request{Action: "ec2:CreateTags", Resource: res, Context: mergeCtx(requestContext(tags), map[string][]string{"ec2:CreateAction": {"CreateFleet"}})},
			)
			if rt != "fleet" {
				out = append(out, policy.Request{Action: "ec2:RunInstances", Resource: res, Context: requestContext(tags)})
			}
		}
		for _, name := range indexed(p, "LaunchTemplateConfigs", ".LaunchTemplateSpecification.LaunchTemplateName") {
			id, ok := w.names[name]
			if !ok {
				// No such template (a dry run names one it never created):
				// EC2 answers about the template, not about access to it.
				continue
			}
			lt := w.arn("launch-template", id)
			for _, a := range []string{"ec2:CreateFleet", "ec2:RunInstances"} {
				out = append(out, policy.Request{Action: a, Resource: lt, Context: resourceContext(nil, w.tags[lt])})
			}
		}
		for _, subnet := range indexed(p, "LaunchTemplateConfigs.1.Overrides", ".SubnetId") {
			out = append(out, policy.Request{Action: "ec2:RunInstances", Resource: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", w.region, w.account, subnet)})
		}
		out = append(out, policy.Request{Action: "iam:PassRole", Resource: "arn:aws:iam::" + w.account + ":role/" + w.nodeRole,
			Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}})
		return out
	case action == "ec2:RunInstances":
		out := []policy.Request{{Action: action, Resource: fmt.Sprintf("arn:aws:ec2:%s::image/%s", w.region, str("ImageId"))}}
		for rt, tags := range tagSpecs(p) {
			res := w.arn(rt, "*")
			out = append(out,
				policy.Request{Action: action, Resource: res, Context: requestContext(tags)},
				policy.Request{Action: "ec2:CreateTags", Resource: res, Context: mergeCtx(requestContext(tags), map[string][]string{"ec2:CreateAction": {"RunInstances"}})},
			)
		}
		if subnet := str("SubnetId"); subnet != "" && p["SubnetId"] != nil {
			out = append(out, policy.Request{Action: action, Resource: fmt.Sprintf("arn:aws:ec2:%s:%s:subnet/%s", w.region, w.account, subnet)})
		}
		return out
	case r.Service == "sqs":
		name := str("QueueName")
		if u, ok := p["QueueUrl"]; ok {
			name = path.Base(fmt.Sprint(u))
		}
		return []policy.Request{{Action: action, Resource: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", w.region, w.account, name)}}
	case action == "ssm:GetParameter":
		return []policy.Request{{Action: action, Resource: fmt.Sprintf("arn:aws:ssm:%s::parameter%s", w.region, str("Name"))}}
	case action == "ssm:GetParameters":
		names, _ := p["Names"].([]any)
		out := make([]policy.Request, 0, len(names))
		for _, n := range names {
			out = append(out, policy.Request{Action: action, Resource: fmt.Sprintf("arn:aws:ssm:%s::parameter%s", w.region, n)})
		}
		return out
	case action == "pricing:GetProducts":
		return []policy.Request{{Action: action, Resource: "*"}}
	case action == "eks:DescribeCluster":
		return []policy.Request{{Action: action, Resource: fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", w.region, w.account, path.Base(str("path")))}}
	case action == "ec2:CreateTags":
		var out []policy.Request
		keys, vals := indexed(p, "Tag", ".Key"), indexed(p, "Tag", ".Value")
		tags := map[string]string{}
		for i := range keys {
			tags[keys[i]] = vals[i]
		}
		for _, id := range indexed(p, "ResourceId", "") {
			res := w.arn("instance", id)
			out = append(out, policy.Request{Action: action, Resource: res, Context: resourceContext(requestContext(tags), w.tags[res])})
		}
		return out
	case action == "ec2:TerminateInstances":
		var out []policy.Request
		for _, id := range indexed(p, "InstanceId", "") {
			res := w.arn("instance", id)
			out = append(out, policy.Request{Action: action, Resource: res, Context: resourceContext(nil, w.tags[res])})
		}
		return out
	case action == "ec2:DeleteLaunchTemplate":
		if name, ok := p["LaunchTemplateName"]; ok {
			res := w.arn("launch-template", fmt.Sprint(name))
			if id, ok := w.names[fmt.Sprint(name)]; ok {
				res = w.arn("launch-template", id)
			}
			return []policy.Request{{Action: action, Resource: res, Context: resourceContext(nil, w.tags["launch-template-name:"+fmt.Sprint(name)])}}
		}
		res := w.arn("launch-template", str("LaunchTemplateId"))
		return []policy.Request{{Action: action, Resource: res, Context: resourceContext(nil, w.tags[res])}}
	case action == "iam:CreateInstanceProfile":
		keys, vals := indexed(p, "Tags.member", ".Key"), indexed(p, "Tags.member", ".Value")
		tags := map[string]string{}
		for i := range keys {
			tags[keys[i]] = vals[i]
		}
		res := "arn:aws:iam::" + w.account + ":instance-profile" + str("Path") + str("InstanceProfileName")
		return []policy.Request{
			{Action: action, Resource: res, Context: requestContext(tags)},
			{Action: "iam:TagInstanceProfile", Resource: res, Context: resourceContext(requestContext(tags), tags)},
		}
	case action == "iam:ListInstanceProfiles":
		return []policy.Request{{Action: action, Resource: "*"}}
	case action == "iam:GetInstanceProfile":
		return []policy.Request{{Action: action, Resource: "arn:aws:iam::" + w.account + ":instance-profile/" + str("InstanceProfileName")}}
	case action == "iam:AddRoleToInstanceProfile":
		return []policy.Request{
			{Action: action, Resource: profileARN(), Context: resourceContext(nil, profileTags())},
			{Action: "iam:PassRole", Resource: "arn:aws:iam::" + w.account + ":role/" + str("RoleName"), Context: map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}},
		}
	case action == "iam:RemoveRoleFromInstanceProfile", action == "iam:DeleteInstanceProfile":
		return []policy.Request{{Action: action, Resource: profileARN(), Context: resourceContext(nil, profileTags())}}
	}
	return nil
}

func mergeCtx(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, m := range []map[string][]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}
