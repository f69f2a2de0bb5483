package policy_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/launchtemplate"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

// runtimeKey signs the runtime's calls, so the request log tells them from
// the test's setup.
const runtimeKey = "AKIAJOISTRUNTIME0001"

// TestRecordedRuntimeCallsAreAllowed drives the runtime's mutating AWS code
// (instance profiles, launch templates, fleets, tagging, termination)
// against the local AWS, then evaluates every call it recorded, with the
// condition keys IAM would see (request tags, resource tags, region,
// passed role), against the rendered policy.
func TestRecordedRuntimeCallsAreAllowed(t *testing.T) {
	ctx := context.Background()
	const cluster = "demo"
	sim, err := awssim.Start(ctx, awssim.Options{ClusterName: cluster, Logger: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	admin := sim.AWSConfig()
	o := sim.Options()
	nodeRole := "demo-node"
	if _, err := iam.NewFromConfig(admin).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(nodeRole), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)}); err != nil {
		t.Fatal(err)
	}
	cfg := admin.Copy()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(runtimeKey, "secret", "")
	ec2c, iamc := ec2.NewFromConfig(cfg), iam.NewFromConfig(cfg)

	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: types.UID("7f1c7b1e-0000-4000-8000-000000000001")}}
	nc.Spec.Role = nodeRole
	tags := map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
		"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/ec2nodeclass": "default",
	}
	profiles := instanceprofile.New(iamc, cluster, o.Region)
	profile, err := profiles.Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	n := sim.EC2.Network()
	templates := launchtemplate.New(ec2c, cluster)
	tmpl, err := templates.Ensure(ctx, launchtemplate.Config{
		AMIID: sim.EC2.Images()[0].ImageID, SecurityGroupIDs: []string{n.NodeSecurityGroupID}, InstanceProfile: profile, Tags: tags,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, sim, nodeRole)
	w.snapshot()
	instances := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{})
	zone := "us-west-2a"
	in, err := instances.Launch(ctx, instance.Request{CapacityType: "on-demand", Tags: tags, Templates: []instance.TemplateOverrides{{
		TemplateName: tmpl, Overrides: []instance.Override{{InstanceType: "m5.large", SubnetID: w.subnetIn(zone), Zone: zone, Price: 0.096}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := instances.Tag(ctx, in.ID, map[string]string{"karpenter.sh/nodeclaim": "default-abcde", "Name": "ip-10-0-0-1"}); err != nil {
		t.Fatal(err)
	}
	w.snapshot()
	if err := instances.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := templates.DeleteAll(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if err := profiles.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}

	doc, err := policy.Render(policy.Params{Region: o.Region, AccountID: o.AccountID, ClusterName: cluster, NodeRoleARN: "arn:aws:iam::" + o.AccountID + ":role/" + nodeRole})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range sim.Requests().Requests("", "") {
		if r.AccessKeyID != runtimeKey || r.Status >= 400 && r.ErrorCode == "NoSuchEntity" {
			continue
		}
		call := r.Service + ":" + r.Operation
		seen[call] = true
		checks := w.authorize(r)
		if len(checks) == 0 {
			t.Errorf("no authorization model for %s; add one to authorize", call)
		}
		for _, c := range checks {
			ok, err := doc.Allows(c)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Errorf("%s needs %s on %s with %v, which the controller policy denies", call, c.Action, c.Resource, c.Context)
			}
		}
	}
	for _, want := range []string{"ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:CreateTags", "ec2:TerminateInstances", "ec2:DeleteLaunchTemplate",
		"iam:CreateInstanceProfile", "iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"} {
		if !seen[want] {
			t.Errorf("the runtime made no %s call; the exercise above is incomplete", want)
		}
	}
}

// world answers what IAM knows when it authorizes: the tags of existing
// resources, snapshotted while they exist.
type world struct {
	t        *testing.T
	sim      *awssim.Server
	region   string
	account  string
	nodeRole string
	tags     map[string]map[string]string // resource ARN -> tags
	names    map[string]string            // launch template name -> ID
}

func newWorld(t *testing.T, sim *awssim.Server, nodeRole string) *world {
	o := sim.Options()
	return &world{t: t, sim: sim, region: o.Region, account: o.AccountID, nodeRole: nodeRole, tags: map[string]map[string]string{}, names: map[string]string{}}
}

func (w *world) arn(kind, id string) string {
	return fmt.Sprintf("arn:aws:ec2:%s:%s:%s/%s", w.region, w.account, kind, id)
}

func (w *world) subnetIn(zone string) string {
	out, err := ec2.NewFromConfig(w.sim.AWSConfig()).DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{SubnetIds: w.sim.EC2.Network().PrivateSubnetIDs})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, s := range out.Subnets {
		if aws.ToString(s.AvailabilityZone) == zone {
			return aws.ToString(s.SubnetId)
		}
	}
	w.t.Fatalf("no subnet in %s", zone)
	return ""
}

// snapshot records the tags of launch templates, instances and instance
// profiles as they are now.
func (w *world) snapshot() {
	ctx := context.Background()
	c := ec2.NewFromConfig(w.sim.AWSConfig())
	lts, err := c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	if err != nil {
		w.t.Fatal(err)
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
		w.t.Fatal(err)
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
	profiles, err := iam.NewFromConfig(w.sim.AWSConfig()).ListInstanceProfiles(ctx, &iam.ListInstanceProfilesInput{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, p := range profiles.InstanceProfiles {
		m := map[string]string{}
		for _, tag := range p.Tags {
			m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		if len(m) == 0 {
			got, err := iam.NewFromConfig(w.sim.AWSConfig()).ListInstanceProfileTags(ctx, &iam.ListInstanceProfileTagsInput{InstanceProfileName: p.InstanceProfileName})
			if err != nil {
				w.t.Fatal(err)
			}
			for _, tag := range got.Tags {
				m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
		}
		w.tags["instance-profile:"+aws.ToString(p.InstanceProfileName)] = m
		w.tags["instance-profile-arn:"+aws.ToString(p.InstanceProfileName)] = map[string]string{"arn": aws.ToString(p.Arn)}
	}
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

// authorize lists the checks IAM makes for a recorded call.
func (w *world) authorize(r awssim.Request) []policy.Request {
	action := r.Service + ":" + r.Operation
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
			lt := w.arn("launch-template", w.names[name])
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
