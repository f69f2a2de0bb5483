package iam_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
)

const (
	account     = "111122223333"
	trustEC2    = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	trustPods   = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"pods.eks.amazonaws.com"},"Action":["sts:AssumeRole","sts:TagSession"]}]}`
	workerNode  = "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
	interrupted = `{"Version":"2012-10-17","Statement":[{"Sid":"AllowInterruptionQueueActions","Effect":"Allow","Action":["sqs:DeleteMessage","sqs:GetQueueUrl","sqs:ReceiveMessage"],"Resource":"arn:aws:sqs:us-west-2:111122223333:karpenter"}]}`
)

func newClient(t *testing.T) (*awsiam.Client, *iam.Service) {
	t.Helper()
	svc := iam.New(account)
	return awsiam.NewFromConfig(clienttest.Config(t, svc)), svc
}

// decoded undoes IAM's URL encoding of policy documents.
func decoded(t *testing.T, s *string) string {
	t.Helper()
	d, err := url.QueryUnescape(aws.ToString(s))
	if err != nil {
		t.Fatalf("document %q is not URL-encoded: %v", aws.ToString(s), err)
	}
	return d
}

func createRole(t *testing.T, c *awsiam.Client, name string) *types.Role {
	t.Helper()
	out, err := c.CreateRole(context.Background(), &awsiam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(trustEC2)})
	if err != nil {
		t.Fatalf("CreateRole %s: %v", name, err)
	}
	return out.Role
}

func TestRoleLifecycle(t *testing.T) {
	ctx := context.Background()
	c, svc := newClient(t)

	boundary, err := c.CreatePolicy(ctx, &awsiam.CreatePolicyInput{PolicyName: aws.String("boundary"), PolicyDocument: aws.String(interrupted)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := c.CreateRole(ctx, &awsiam.CreateRoleInput{
		RoleName:                 aws.String("KarpenterControllerRole-demo"),
		Path:                     aws.String("/joist/"),
		AssumeRolePolicyDocument: aws.String(trustPods),
		Description:              aws.String("controller"),
		PermissionsBoundary:      boundary.Policy.Arn,
		Tags:                     []types.Tag{{Key: aws.String("kubernetes.io/cluster/demo"), Value: aws.String("owned")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Role
	if aws.ToString(r.Arn) != "arn:aws:iam::"+account+":role/joist/KarpenterControllerRole-demo" || aws.ToString(r.Path) != "/joist/" {
		t.Fatalf("role ARN %s path %s", aws.ToString(r.Arn), aws.ToString(r.Path))
	}
	if decoded(t, r.AssumeRolePolicyDocument) != trustPods {
		t.Fatalf("trust policy not stored as given: %s", decoded(t, r.AssumeRolePolicyDocument))
	}
	if len(aws.ToString(r.RoleId)) != 21 || aws.ToString(r.RoleId)[:4] != "AROA" || r.CreateDate == nil {
		t.Fatalf("RoleId %s CreateDate %v", aws.ToString(r.RoleId), r.CreateDate)
	}

	got, err := c.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("KarpenterControllerRole-demo")})
	if err != nil {
		t.Fatal(err)
	}
	g := got.Role
	if aws.ToString(g.Description) != "controller" || aws.ToInt32(g.MaxSessionDuration) != 3600 ||
		g.PermissionsBoundary == nil || aws.ToString(g.PermissionsBoundary.PermissionsBoundaryArn) != aws.ToString(boundary.Policy.Arn) ||
		len(g.Tags) != 1 || aws.ToString(g.Tags[0].Value) != "owned" {
		t.Fatalf("GetRole = %+v", g)
	}
	if info, ok := svc.Role("KarpenterControllerRole-demo"); !ok || info.ARN != aws.ToString(r.Arn) {
		t.Fatalf("Go API Role = %+v, %v", info, ok)
	}

	_, err = c.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("KarpenterControllerRole-demo"), AssumeRolePolicyDocument: aws.String(trustPods)})
	var exists *types.EntityAlreadyExistsException
	if !errors.As(err, &exists) {
		t.Fatalf("duplicate CreateRole error = %v", err)
	}

	if _, err := c.UpdateAssumeRolePolicy(ctx, &awsiam.UpdateAssumeRolePolicyInput{RoleName: aws.String("KarpenterControllerRole-demo"), PolicyDocument: aws.String(trustEC2)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TagRole(ctx, &awsiam.TagRoleInput{RoleName: aws.String("KarpenterControllerRole-demo"), Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("infra")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagRole(ctx, &awsiam.UntagRoleInput{RoleName: aws.String("KarpenterControllerRole-demo"), TagKeys: []string{"kubernetes.io/cluster/demo"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListRoleTags(ctx, &awsiam.ListRoleTagsInput{RoleName: aws.String("KarpenterControllerRole-demo")})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "team" {
		t.Fatalf("ListRoleTags = %+v, %v", tags, err)
	}
	got, err = c.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("KarpenterControllerRole-demo")})
	if err != nil || decoded(t, got.Role.AssumeRolePolicyDocument) != trustEC2 {
		t.Fatalf("trust policy after update = %v, %v", got, err)
	}
	if _, err := c.DeleteRolePermissionsBoundary(ctx, &awsiam.DeleteRolePermissionsBoundaryInput{RoleName: aws.String("KarpenterControllerRole-demo")}); err != nil {
		t.Fatal(err)
	}

	if _, err := c.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: aws.String("KarpenterControllerRole-demo")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("KarpenterControllerRole-demo")})
	var missing *types.NoSuchEntityException
	if !errors.As(err, &missing) || clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("GetRole after delete error = %v", err)
	}
}

func TestDeleteRoleConflicts(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	createRole(t, c, "node")
	role := aws.String("node")

	if _, err := c.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: role, PolicyArn: aws.String(workerNode)}); err != nil {
		t.Fatalf("attaching the AWS managed %s: %v", workerNode, err)
	}
	_, err := c.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: role})
	var conflict *types.DeleteConflictException
	if !errors.As(err, &conflict) {
		t.Fatalf("DeleteRole with an attached policy error = %v, want DeleteConflict", err)
	}
	attached, err := c.ListAttachedRolePolicies(ctx, &awsiam.ListAttachedRolePoliciesInput{RoleName: role})
	if err != nil || len(attached.AttachedPolicies) != 1 || aws.ToString(attached.AttachedPolicies[0].PolicyName) != "AmazonEKSWorkerNodePolicy" {
		t.Fatalf("ListAttachedRolePolicies = %+v, %v", attached, err)
	}
	if _, err := c.DetachRolePolicy(ctx, &awsiam.DetachRolePolicyInput{RoleName: role, PolicyArn: aws.String(workerNode)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DetachRolePolicy(ctx, &awsiam.DetachRolePolicyInput{RoleName: role, PolicyArn: aws.String(workerNode)})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("second detach error = %v", err)
	}

	if _, err := c.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: role, PolicyName: aws.String("inline"), PolicyDocument: aws.String(interrupted)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: role})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("DeleteRole with an inline policy error = %v", err)
	}
	if _, err := c.DeleteRolePolicy(ctx, &awsiam.DeleteRolePolicyInput{RoleName: role, PolicyName: aws.String("inline")}); err != nil {
		t.Fatal(err)
	}

	if _, err := c.CreateInstanceProfile(ctx, &awsiam.CreateInstanceProfileInput{InstanceProfileName: aws.String("node-profile")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddRoleToInstanceProfile(ctx, &awsiam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String("node-profile"), RoleName: role}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: role})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("DeleteRole in an instance profile error = %v", err)
	}
	if _, err := c.RemoveRoleFromInstanceProfile(ctx, &awsiam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String("node-profile"), RoleName: role}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: role}); err != nil {
		t.Fatalf("DeleteRole once free: %v", err)
	}
}

func TestInlinePolicies(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	createRole(t, c, "controller")
	role := aws.String("controller")
	for _, n := range []string{"b", "a"} {
		if _, err := c.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: role, PolicyName: aws.String(n), PolicyDocument: aws.String(interrupted)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.GetRolePolicy(ctx, &awsiam.GetRolePolicyInput{RoleName: role, PolicyName: aws.String("a")})
	if err != nil || decoded(t, got.PolicyDocument) != interrupted || aws.ToString(got.RoleName) != "controller" {
		t.Fatalf("GetRolePolicy = %+v, %v", got, err)
	}
	list, err := c.ListRolePolicies(ctx, &awsiam.ListRolePoliciesInput{RoleName: role})
	if err != nil || len(list.PolicyNames) != 2 {
		t.Fatalf("ListRolePolicies = %+v, %v", list, err)
	}
	_, err = c.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: role, PolicyName: aws.String("bad"), PolicyDocument: aws.String(`{"Version":`)})
	var malformed *types.MalformedPolicyDocumentException
	if !errors.As(err, &malformed) {
		t.Fatalf("malformed document error = %v", err)
	}
	_, err = c.GetRolePolicy(ctx, &awsiam.GetRolePolicyInput{RoleName: role, PolicyName: aws.String("absent")})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("GetRolePolicy absent error = %v", err)
	}
}

func TestManagedPolicyVersions(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	created, err := c.CreatePolicy(ctx, &awsiam.CreatePolicyInput{
		PolicyName:     aws.String("KarpenterControllerPolicy-demo"),
		Path:           aws.String("/joist/"),
		PolicyDocument: aws.String(interrupted),
		Tags:           []types.Tag{{Key: aws.String("owner"), Value: aws.String("joist")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	arn := created.Policy.Arn
	if aws.ToString(arn) != "arn:aws:iam::"+account+":policy/joist/KarpenterControllerPolicy-demo" || aws.ToString(created.Policy.DefaultVersionId) != "v1" {
		t.Fatalf("CreatePolicy = %+v", created.Policy)
	}
	v2doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"eks:DescribeCluster","Resource":"*"}]}`
	v2, err := c.CreatePolicyVersion(ctx, &awsiam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(v2doc), SetAsDefault: true})
	if err != nil || aws.ToString(v2.PolicyVersion.VersionId) != "v2" || !v2.PolicyVersion.IsDefaultVersion {
		t.Fatalf("CreatePolicyVersion = %+v, %v", v2, err)
	}
	got, err := c.GetPolicyVersion(ctx, &awsiam.GetPolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v2")})
	if err != nil || decoded(t, got.PolicyVersion.Document) != v2doc {
		t.Fatalf("GetPolicyVersion = %+v, %v", got, err)
	}
	list, err := c.ListPolicyVersions(ctx, &awsiam.ListPolicyVersionsInput{PolicyArn: arn})
	if err != nil || len(list.Versions) != 2 || aws.ToString(list.Versions[0].VersionId) != "v2" {
		t.Fatalf("ListPolicyVersions = %+v, %v", list, err)
	}
	_, err = c.DeletePolicyVersion(ctx, &awsiam.DeletePolicyVersionInput{PolicyArn: arn, VersionId: aws.String("v2")})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("deleting the default version error = %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := c.CreatePolicyVersion(ctx, &awsiam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(v2doc)}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = c.CreatePolicyVersion(ctx, &awsiam.CreatePolicyVersionInput{PolicyArn: arn, PolicyDocument: aws.String(v2doc)})
	var limit *types.LimitExceededException
	if !errors.As(err, &limit) {
		t.Fatalf("sixth version error = %v, want LimitExceeded", err)
	}

	createRole(t, c, "controller")
	if _, err := c.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("controller"), PolicyArn: arn}); err != nil {
		t.Fatal(err)
	}
	p, err := c.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: arn})
	if err != nil || aws.ToInt32(p.Policy.AttachmentCount) != 1 || aws.ToString(p.Policy.DefaultVersionId) != "v2" {
		t.Fatalf("GetPolicy = %+v, %v", p, err)
	}
	_, err = c.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: arn})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("deleting an attached policy error = %v", err)
	}
	if _, err := c.DetachRolePolicy(ctx, &awsiam.DetachRolePolicyInput{RoleName: aws.String("controller"), PolicyArn: arn}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: arn})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("deleting a policy with versions error = %v", err)
	}
	for _, v := range []string{"v1", "v3", "v4", "v5"} {
		if _, err := c.DeletePolicyVersion(ctx, &awsiam.DeletePolicyVersionInput{PolicyArn: arn, VersionId: aws.String(v)}); err != nil {
			t.Fatalf("DeletePolicyVersion %s: %v", v, err)
		}
	}
	if _, err := c.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: arn}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: arn})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("GetPolicy after delete error = %v", err)
	}

	aws1, err := c.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: aws.String(workerNode)})
	if err != nil || aws.ToString(aws1.Policy.PolicyName) != "AmazonEKSWorkerNodePolicy" {
		t.Fatalf("AWS managed policy = %+v, %v", aws1, err)
	}
}

func TestInstanceProfiles(t *testing.T) {
	ctx := context.Background()
	c, svc := newClient(t)
	createRole(t, c, "node")
	createRole(t, c, "other")
	out, err := c.CreateInstanceProfile(ctx, &awsiam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String("demo_123"),
		Path:                aws.String("/karpenter/us-west-2/demo/"),
		Tags:                []types.Tag{{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String("default")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	wantARN := "arn:aws:iam::" + account + ":instance-profile/karpenter/us-west-2/demo/demo_123"
	if aws.ToString(out.InstanceProfile.Arn) != wantARN || len(out.InstanceProfile.Roles) != 0 {
		t.Fatalf("CreateInstanceProfile = %+v", out.InstanceProfile)
	}
	name := aws.String("demo_123")
	if _, err := c.AddRoleToInstanceProfile(ctx, &awsiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("node")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.AddRoleToInstanceProfile(ctx, &awsiam.AddRoleToInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("other")})
	if clienttest.ErrorCode(t, err) != "LimitExceeded" {
		t.Fatalf("second role error = %v", err)
	}
	got, err := c.GetInstanceProfile(ctx, &awsiam.GetInstanceProfileInput{InstanceProfileName: name})
	if err != nil || len(got.InstanceProfile.Roles) != 1 || aws.ToString(got.InstanceProfile.Roles[0].RoleName) != "node" {
		t.Fatalf("GetInstanceProfile = %+v, %v", got, err)
	}
	if p, ok := svc.InstanceProfile(wantARN); !ok || p.Name != "demo_123" || len(p.Roles) != 1 {
		t.Fatalf("Go API InstanceProfile by ARN = %+v, %v", p, ok)
	}
	if _, err := c.TagInstanceProfile(ctx, &awsiam.TagInstanceProfileInput{InstanceProfileName: name, Tags: []types.Tag{{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("demo")}}}); err != nil {
		t.Fatal(err)
	}
	list, err := c.ListInstanceProfiles(ctx, &awsiam.ListInstanceProfilesInput{PathPrefix: aws.String("/karpenter/")})
	if err != nil || len(list.InstanceProfiles) != 1 || len(list.InstanceProfiles[0].Tags) != 2 {
		t.Fatalf("ListInstanceProfiles = %+v, %v", list, err)
	}
	forRole, err := c.ListInstanceProfilesForRole(ctx, &awsiam.ListInstanceProfilesForRoleInput{RoleName: aws.String("node")})
	if err != nil || len(forRole.InstanceProfiles) != 1 {
		t.Fatalf("ListInstanceProfilesForRole = %+v, %v", forRole, err)
	}
	_, err = c.DeleteInstanceProfile(ctx, &awsiam.DeleteInstanceProfileInput{InstanceProfileName: name})
	if clienttest.ErrorCode(t, err) != "DeleteConflict" {
		t.Fatalf("deleting a profile with a role error = %v", err)
	}
	if _, err := c.RemoveRoleFromInstanceProfile(ctx, &awsiam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: name, RoleName: aws.String("node")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteInstanceProfile(ctx, &awsiam.DeleteInstanceProfileInput{InstanceProfileName: name}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetInstanceProfile(ctx, &awsiam.GetInstanceProfileInput{InstanceProfileName: name})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("GetInstanceProfile after delete error = %v", err)
	}
}

func TestValidation(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	_, err := c.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("r"), Path: aws.String("no-slashes"), AssumeRolePolicyDocument: aws.String(trustEC2)})
	if clienttest.ErrorCode(t, err) != "ValidationError" {
		t.Fatalf("bad path error = %v", err)
	}
	_, err = c.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("absent"), PolicyArn: aws.String(workerNode)})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("attach to a missing role error = %v", err)
	}
	createRole(t, c, "r")
	_, err = c.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("r"), PolicyArn: aws.String("arn:aws:iam::aws:policy/NoSuchPolicy")})
	if clienttest.ErrorCode(t, err) != "NoSuchEntity" {
		t.Fatalf("attach a missing policy error = %v", err)
	}
	if _, err := c.CreateServiceLinkedRole(ctx, &awsiam.CreateServiceLinkedRoleInput{AWSServiceName: aws.String("spot.amazonaws.com")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateServiceLinkedRole(ctx, &awsiam.CreateServiceLinkedRoleInput{AWSServiceName: aws.String("spot.amazonaws.com")})
	if clienttest.ErrorCode(t, err) != "InvalidInput" {
		t.Fatalf("second spot service-linked role error = %v", err)
	}
}

func TestListInstanceProfilesPages(t *testing.T) {
	ctx := context.Background()
	c, _ := newClient(t)
	for _, n := range []string{"p1", "p2", "p3", "p4", "p5"} {
		if _, err := c.CreateInstanceProfile(ctx, &awsiam.CreateInstanceProfileInput{InstanceProfileName: aws.String(n)}); err != nil {
			t.Fatal(err)
		}
	}
	pages := awsiam.NewListInstanceProfilesPaginator(c, &awsiam.ListInstanceProfilesInput{MaxItems: aws.Int32(2)})
	var names []string
	n := 0
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n++
		for _, p := range out.InstanceProfiles {
			names = append(names, aws.ToString(p.InstanceProfileName))
		}
	}
	if n != 3 || len(names) != 5 || names[0] != "p1" || names[4] != "p5" {
		t.Fatalf("%d pages with %v, want 3 pages holding p1..p5", n, names)
	}
}
