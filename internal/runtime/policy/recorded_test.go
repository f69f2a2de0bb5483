package policy_test

import (
	"context"
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
	"github.com/joistdev/terraform-provider-joist/internal/testenv/audit"
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
		NodeClass: "default", AMIID: sim.EC2.Images()[0].ImageID, SecurityGroupIDs: []string{n.NodeSecurityGroupID}, InstanceProfile: profile, Tags: tags,
	})
	if err != nil {
		t.Fatal(err)
	}
	w := audit.New(sim.AWSConfig(), o.AccountID, nodeRole)
	snapshot(t, w)
	instances := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{})
	zone := "us-west-2a"
	in, err := instances.Launch(ctx, instance.Request{CapacityType: "on-demand", Tags: tags, Templates: []instance.TemplateOverrides{{
		TemplateName: tmpl, Overrides: []instance.Override{{InstanceType: "m5.large", SubnetID: subnetIn(t, sim, zone), Zone: zone, Price: 0.096}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := instances.Tag(ctx, in.ID, map[string]string{"karpenter.sh/nodeclaim": "default-abcde", "Name": "ip-10-0-0-1"}); err != nil {
		t.Fatal(err)
	}
	snapshot(t, w)
	if err := instances.Terminate(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := templates.DeleteAll(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	// Garbage collection lists the cluster's profiles and deletes one.
	if _, err := profiles.Managed(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := profiles.Delete(ctx, profile); err != nil {
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
		checks := w.Checks(audit.Call{Service: r.Service, Operation: r.Operation, Parameters: r.Parameters})
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
		"iam:CreateInstanceProfile", "iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile", "iam:ListInstanceProfiles"} {
		if !seen[want] {
			t.Errorf("the runtime made no %s call; the exercise above is incomplete", want)
		}
	}
}

func snapshot(t *testing.T, w *audit.Audit) {
	t.Helper()
	if err := w.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func subnetIn(t *testing.T, sim *awssim.Server, zone string) string {
	out, err := ec2.NewFromConfig(sim.AWSConfig()).DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{SubnetIds: sim.EC2.Network().PrivateSubnetIDs})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out.Subnets {
		if aws.ToString(s.AvailabilityZone) == zone {
			return aws.ToString(s.SubnetId)
		}
	}
	t.Fatalf("no subnet in %s", zone)
	return ""
}
