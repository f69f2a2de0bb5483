package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/demo"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
	"github.com/joistdev/terraform-provider-joist/internal/testenv/audit"
)

// TestDemoShort runs `make demo` in its short mode against a sandbox of its
// own, then `make demo-down`, and checks each phase's outcome from the
// cluster and from awssim through the AWS SDK, never from the printed text.
func TestDemoShort(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"terraform-provider-joist", "kube-apiserver", "kwok"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			t.Fatalf("bin/%s is missing: run `make tools build` first", b)
		}
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatal("the terraform CLI is not on PATH")
	}
	var out io.Writer = io.Discard
	if testing.Verbose() {
		out = os.Stderr
	}
	dir := filepath.Join(t.TempDir(), "sandbox")
	c := &checker{t: t, dir: dir}
	opts := demo.Options{Root: root, Dir: dir, Short: true, Out: out, AfterPhase: c.phase}
	down := false
	t.Cleanup(func() {
		if !down {
			_ = demo.Down(context.Background(), demo.Options{Root: root, Dir: dir, Out: out})
		}
	})

	report, err := demo.Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Phases) != 6 {
		t.Fatalf("report has %d phases, want 6", len(report.Phases))
	}
	for _, p := range report.Phases {
		t.Logf("%-26s %6s  nodes %d  $%.3f/h  %s", p.Name, p.Took.Round(1e9), p.Nodes, p.CostPerHour, p.Note)
	}

	pid := sandboxPID(t, dir)
	opts.BeforeStop = c.nothingLeft
	down = true
	if err := demo.Down(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the sandbox directory %s is still there after demo-down (%v)", dir, err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the sandbox process %d still runs after demo-down", pid)
	}
}

func sandboxPID(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "sandbox.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// checker asserts each phase's outcome with its own queries.
type checker struct {
	t   *testing.T
	dir string
	w   *demo.World
	// scaledUpCost is what the instances cost after the scale-up.
	scaledUpCost float64
	// policy is the controller role's, audit its view of AWS resources.
	policy policy.Document
	audit  *audit.Audit
}

func (c *checker) phase(p demo.Phase) error {
	c.t.Helper()
	if c.w == nil {
		w, err := demo.Connect(c.dir)
		if err != nil {
			return err
		}
		c.w = w
	}
	failed := c.t.Failed()
	switch {
	case p.Name == "terraform apply":
		c.applied(p)
	case strings.HasPrefix(p.Name, "scale up"):
		c.scaledUp()
	case strings.HasPrefix(p.Name, "scale down"):
		c.scaledDown()
	case p.Name == "spot interruption":
		c.interrupted(p.Interrupted, p.NoticeAt)
	case p.Name == "planned change":
		c.predicted(p.Impact)
	case strings.HasPrefix(p.Name, "AMI release"):
		c.drifted(p.Images)
		c.prepareAudit()
	default:
		c.t.Errorf("unexpected phase %q", p.Name)
	}
	if !failed && c.t.Failed() {
		return fmt.Errorf("the %s phase's outcome is wrong (see above)", p.Name)
	}
	return nil
}

var ctx = context.Background()

// applied: what examples/quickstart creates exists and is ready, and the
// plan right after the apply has nothing to change.
func (c *checker) applied(p demo.Phase) {
	t, kube := c.t, c.w.Kube
	if p.PlanExitCode != 0 {
		t.Errorf("terraform plan -detailed-exitcode after apply exited %d, want 0 (no changes):\n%s", p.PlanExitCode, p.PlanOutput)
	}
	for _, name := range []string{demo.GeneralPool, demo.OnDemandPool} {
		np := &v1.NodePool{}
		if err := kube.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
			t.Errorf("NodePool %s: %v", name, err)
		} else if !meta.IsStatusConditionTrue(np.Status.Conditions, v1.ConditionTypeReady) {
			t.Errorf("NodePool %s is not Ready", name)
		}
	}
	nc := &awsv1.EC2NodeClass{}
	if err := kube.Get(ctx, client.ObjectKey{Name: "default"}, nc); err != nil {
		t.Errorf("EC2NodeClass default: %v", err)
	} else if nc.Status.InstanceProfile == "" || len(nc.Status.Subnets) == 0 || len(nc.Status.AMIs) == 0 {
		t.Errorf("EC2NodeClass default is unresolved: %+v", nc.Status)
	}
	var deps appsv1.DeploymentList
	if err := kube.List(ctx, &deps); err != nil {
		t.Fatal(err)
	}
	controllers := 0
	for _, d := range deps.Items {
		if len(d.Spec.Template.Spec.Containers) > 0 && strings.Contains(d.Spec.Template.Spec.Containers[0].Image, "joist-controller") {
			controllers++
			if d.Status.AvailableReplicas < 1 {
				t.Errorf("controller Deployment %s/%s has no available replica", d.Namespace, d.Name)
			}
		}
	}
	if controllers != 1 {
		t.Errorf("%d controller Deployments, want 1", controllers)
	}
	if _, err := sqs.NewFromConfig(c.w.AWS).GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(demo.ClusterName)}); err != nil {
		t.Errorf("interruption queue: %v", err)
	}
	rules, err := eventbridge.NewFromConfig(c.w.AWS).ListRules(ctx, &eventbridge.ListRulesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rules.Rules) < 5 {
		t.Errorf("%d EventBridge rules, want the interruption queue's 5", len(rules.Rules))
	}
	roles, err := iam.NewFromConfig(c.w.AWS).ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil {
		t.Fatal(err)
	}
	trusted := map[string]bool{}
	for _, r := range roles.Roles {
		doc := aws.ToString(r.AssumeRolePolicyDocument)
		for _, principal := range []string{"ec2.amazonaws.com", "pods.eks.amazonaws.com"} {
			if strings.Contains(doc, principal) {
				trusted[principal] = true
			}
		}
	}
	if !trusted["ec2.amazonaws.com"] || !trusted["pods.eks.amazonaws.com"] {
		t.Errorf("IAM roles trusted by %v, want the node role (ec2) and the controller role (pods.eks)", trusted)
	}
}

// scaledUp: every pod runs on a Joist node of its pool; the general pool is
// on spot, the tainted pool on-demand; claims and instances match.
func (c *checker) scaledUp() {
	t := c.t
	nodes := c.nodes()
	pods := c.pods()
	if len(pods) != 11 {
		t.Errorf("%d demo pods, want 11", len(pods))
	}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
			continue
		}
		want := demo.GeneralPool
		if p.Labels["app"] == "critical" {
			want = demo.OnDemandPool
		}
		if got := nodes[p.Spec.NodeName].Labels[v1.NodePoolLabelKey]; got != want {
			t.Errorf("pod %s runs on %s of NodePool %q, want %q", p.Name, p.Spec.NodeName, got, want)
		}
	}
	insts := c.instances()
	for _, i := range insts {
		pool := tag(i, v1.NodePoolLabelKey)
		spot := i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot
		if pool == demo.GeneralPool && !spot || pool == demo.OnDemandPool && spot {
			t.Errorf("instance %s (%s) of NodePool %s has lifecycle %q", aws.ToString(i.InstanceId), i.InstanceType, pool, i.InstanceLifecycle)
		}
	}
	c.claimsMatchInstances(insts)
	c.scaledUpCost = c.cost(insts)
}

// scaledDown: the remaining pods run, no general-purpose node is empty,
// and the instances cost less than after the scale-up.
func (c *checker) scaledDown() {
	t := c.t
	hosting := map[string]int{}
	pods := c.pods()
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s", p.Name, p.Status.Phase)
		}
		hosting[p.Spec.NodeName]++
	}
	if len(pods) != 3 {
		t.Errorf("%d demo pods, want 3", len(pods))
	}
	for name, n := range c.nodes() {
		if n.Labels[v1.NodePoolLabelKey] == demo.GeneralPool && hosting[name] == 0 {
			t.Errorf("general-purpose node %s hosts no pod after consolidation", name)
		}
	}
	insts := c.instances()
	c.claimsMatchInstances(insts)
	if cost := c.cost(insts); cost >= c.scaledUpCost {
		t.Errorf("after consolidation the instances cost $%.4f/h, not less than the $%.4f/h after the scale-up", cost, c.scaledUpCost)
	}
}

// interrupted: the reclaimed instance is gone with its claim, users saw a
// SpotInterrupted event, a replacement was Ready before the two-minute
// notice ran out, every pod runs again, and the queue holds no message.
func (c *checker) interrupted(id string, notice time.Time) {
	t := c.t
	if id == "" {
		t.Fatal("the interruption phase names no instance")
	}
	out, err := ec2.NewFromConfig(c.w.AWS).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if s := i.State.Name; s != ec2types.InstanceStateNameShuttingDown && s != ec2types.InstanceStateNameTerminated {
				t.Errorf("interrupted instance %s is %s", id, s)
			}
		}
	}
	for _, cl := range c.claims() {
		if strings.HasSuffix(cl.Status.ProviderID, "/"+id) {
			t.Errorf("NodeClaim %s of the interrupted instance is still there", cl.Name)
		}
	}
	var evs eventsv1.EventList
	if err := c.w.Kube.List(ctx, &evs); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(evs.Items, func(e eventsv1.Event) bool { return e.Reason == "SpotInterrupted" }) {
		t.Error("no SpotInterrupted event")
	}
	for _, p := range c.pods() {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s after the interruption", p.Name, p.Status.Phase)
		}
	}
	c.claimsMatchInstances(c.instances())
	reclaim := notice.Add(2 * time.Minute)
	replacements := 0
	for _, cl := range c.claims() {
		if cl.CreationTimestamp.Time.Before(notice.Truncate(time.Second)) {
			continue
		}
		init := meta.FindStatusCondition(cl.Status.Conditions, v1.ConditionTypeInitialized)
		if init == nil || init.Status != metav1.ConditionTrue {
			t.Errorf("replacement NodeClaim %s is not initialized", cl.Name)
			continue
		}
		if !init.LastTransitionTime.Time.Before(reclaim) {
			t.Errorf("replacement NodeClaim %s was initialized at %s, after the notice ran out at %s", cl.Name, init.LastTransitionTime.Time, reclaim)
		}
		replacements++
	}
	if replacements == 0 {
		t.Error("no NodeClaim was launched after the interruption warning")
	}
	// Every message (the warning and the instance's state changes) is
	// handled and deleted.
	q := sqs.NewFromConfig(c.w.AWS)
	url, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(demo.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	var left string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: url.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		}})
		if err != nil {
			t.Fatal(err)
		}
		visible, inFlight := attrs.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)], attrs.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]
		if visible == "0" && inFlight == "0" {
			break
		}
		if left = visible + " visible, " + inFlight + " in flight"; time.Now().After(deadline) {
			t.Errorf("the interruption queue still holds messages a minute after the interruption: %s", left)
			break
		}
	}
}

// drifted: the images the demo released are what the al2023 aliases now
// resolve to in SSM, and every claim and instance runs one of them.
func (c *checker) drifted(images []string) {
	t := c.t
	cl, err := eks.NewFromConfig(c.w.AWS).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(demo.ClusterName)})
	if err != nil {
		t.Fatal(err)
	}
	var current []string
	for _, arch := range []string{"x86_64", "arm64"} {
		name := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/standard/recommended/image_id", aws.ToString(cl.Cluster.Version), arch)
		out, err := ssm.NewFromConfig(c.w.AWS).GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		current = append(current, aws.ToString(out.Parameter.Value))
	}
	slices.Sort(current)
	got := slices.Sorted(slices.Values(images))
	if !slices.Equal(current, got) {
		t.Errorf("the demo released %v, but SSM's al2023 aliases resolve to %v", got, current)
	}
	for _, claim := range c.claims() {
		if !slices.Contains(current, claim.Status.ImageID) {
			t.Errorf("NodeClaim %s runs %s, not the new release %v", claim.Name, claim.Status.ImageID, current)
		}
	}
	insts := c.instances()
	for _, i := range insts {
		if !slices.Contains(current, aws.ToString(i.ImageId)) {
			t.Errorf("instance %s runs %s, not the new release %v", aws.ToString(i.InstanceId), aws.ToString(i.ImageId), current)
		}
	}
	for _, p := range c.pods() {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("pod %s is %s after the drift", p.Name, p.Status.Phase)
		}
	}
	c.claimsMatchInstances(insts)
}

// predicted: the planned change did what terraform plan predicted.
func (c *checker) predicted(i *demo.Impact) {
	if i == nil {
		c.t.Error("the planned change phase compared nothing")
		return
	}
	if i.Predicted.Replaced != i.Actual.Replaced || i.Predicted.Pending != i.Actual.Pending {
		c.t.Errorf("predicted %d nodes replaced and %d pods Pending, the controller left %d and %d",
			i.Predicted.Replaced, i.Predicted.Pending, i.Actual.Replaced, i.Actual.Pending)
	}
	if d := i.Predicted.CostPerHour - i.Actual.CostPerHour; d > 0.1*i.Actual.CostPerHour || -d > 0.1*i.Actual.CostPerHour {
		c.t.Errorf("predicted $%.4f/h, the pool costs $%.4f/h: more than 10%% off", i.Predicted.CostPerHour, i.Actual.CostPerHour)
	}
}

// prepareAudit reads the policy terraform attached to the controller role
// and snapshots the tags of what the controller created, while it all
// exists: the destroy removes the role, the templates and the profile.
func (c *checker) prepareAudit() {
	t := c.t
	c.policy = c.controllerPolicy()
	nc := &awsv1.EC2NodeClass{}
	if err := c.w.Kube.Get(ctx, client.ObjectKey{Name: "default"}, nc); err != nil {
		t.Fatal(err)
	}
	id, err := sts.NewFromConfig(c.w.AWS).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	c.audit = audit.New(c.w.AWS, aws.ToString(id.Account), nc.Spec.Role)
	if err := c.audit.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
}

// controllerCallsAudited: every AWS call the controller that joist_controller
// deployed made during the whole demo, destroy included (it signs them with
// its own key), is allowed by the policy terraform attached to its role,
// evaluated as IAM would (action, resource, request and resource tags); and
// every action that policy grants was needed by some call.
func (c *checker) controllerCallsAudited(w *demo.World) {
	t := c.t
	if c.audit == nil {
		t.Fatal("no audit was prepared: the drift phase did not run")
	}
	if err := c.audit.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	var reqs []awssim.Request
	if err := w.Admin(ctx, "GET", "/_awssim/requests", nil, &reqs); err != nil {
		t.Fatal(err)
	}
	calls, used := map[string]int{}, map[string]bool{}
	for _, r := range reqs {
		// IAM authorizes before it looks the entity up; a missing one has
		// no tags to evaluate.
		if r.AccessKeyID != sandbox.ControllerAccessKeyID || r.ErrorCode == "NoSuchEntity" {
			continue
		}
		call := r.Service + ":" + r.Operation
		calls[call]++
		checks := c.audit.Checks(audit.Call{Service: r.Service, Operation: r.Operation, Parameters: r.Parameters})
		if len(checks) == 0 {
			t.Errorf("no authorization model for %s", call)
		}
		for _, chk := range checks {
			used[chk.Action] = true
			ok, err := c.policy.Allows(chk)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Errorf("the controller's %s needs %s on %s with %v, which its role's policy denies", call, chk.Action, chk.Resource, chk.Context)
			}
		}
	}
	if len(calls) == 0 {
		t.Fatal("awssim recorded no call signed by the controller")
	}
	for _, a := range c.policy.Actions() {
		if !used[a] && notInTheDemo[a] == "" {
			t.Errorf("the controller role's policy grants %s, which no call of the demo needed", a)
		}
	}
	t.Logf("the controller made %d kinds of AWS call, each allowed by its role's policy, which grants nothing the demo left unused but the features it does not use (%d): %v", len(calls), len(notInTheDemo), calls)
}

// notInTheDemo are actions the policy grants for features the quickstart
// does not use, with where a test needs them.
var notInTheDemo = map[string]string{
	"ec2:DescribeCapacityReservations": "the quickstart selects no capacity reservation; TestShared/reserved-capacity and cloud/aws's reservation tests resolve them",
	"ec2:DescribePlacementGroups":      "the quickstart selects no placement group; TestShared/ec2net/placement-group and cloud/aws's placement group tests resolve them",
	"ssm:GetParameter":                 "the quickstart's aliases read their parameters with GetParameters; an ssmParameter term, and a role denied GetParameters, read them one by one (ami's SSM tests, TestAMIAliasParametersInOneCall)",
}

// controllerPolicy reads the statements of the controller role's inline and
// managed policies back from IAM.
func (c *checker) controllerPolicy() policy.Document {
	t := c.t
	client := iam.NewFromConfig(c.w.AWS)
	roles, err := client.ListRoles(ctx, &iam.ListRolesInput{})
	if err != nil {
		t.Fatal(err)
	}
	var doc policy.Document
	add := func(raw *string) {
		text, err := url.QueryUnescape(aws.ToString(raw))
		if err != nil {
			t.Fatal(err)
		}
		var d policy.Document
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Fatalf("policy document: %v", err)
		}
		doc.Statement = append(doc.Statement, d.Statement...)
	}
	for _, r := range roles.Roles {
		if !strings.Contains(aws.ToString(r.AssumeRolePolicyDocument), "pods.eks.amazonaws.com") {
			continue
		}
		inline, err := client.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: r.RoleName})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range inline.PolicyNames {
			p, err := client.GetRolePolicy(ctx, &iam.GetRolePolicyInput{RoleName: r.RoleName, PolicyName: aws.String(name)})
			if err != nil {
				t.Fatal(err)
			}
			add(p.PolicyDocument)
		}
		attached, err := client.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: r.RoleName})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range attached.AttachedPolicies {
			p, err := client.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: a.PolicyArn})
			if err != nil {
				t.Fatal(err)
			}
			v, err := client.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: a.PolicyArn, VersionId: p.Policy.DefaultVersionId})
			if err != nil {
				t.Fatal(err)
			}
			add(v.PolicyVersion.Document)
		}
	}
	if len(doc.Statement) == 0 {
		t.Fatal("the controller role has no policy statement")
	}
	return doc
}

// nothingLeft runs after terraform destroy: no live instance, NodeClaim or
// NodePool.
func (c *checker) nothingLeft(w *demo.World) error {
	t := c.t
	c.controllerCallsAudited(w)
	out, err := ec2.NewFromConfig(w.AWS).DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
	if err != nil {
		return err
	}
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if s := i.State.Name; s != ec2types.InstanceStateNameTerminated && s != ec2types.InstanceStateNameShuttingDown {
				t.Errorf("instance %s is %s after demo-down's terraform destroy", aws.ToString(i.InstanceId), s)
			}
		}
	}
	var claims v1.NodeClaimList
	if err := w.Kube.List(ctx, &claims); err == nil && len(claims.Items) > 0 {
		t.Errorf("%d NodeClaims left after terraform destroy", len(claims.Items))
	}
	var pools v1.NodePoolList
	if err := w.Kube.List(ctx, &pools); err == nil && len(pools.Items) > 0 {
		t.Errorf("%d NodePools left after terraform destroy", len(pools.Items))
	}
	return nil
}

func (c *checker) nodes() map[string]corev1.Node {
	var list corev1.NodeList
	if err := c.w.Kube.List(ctx, &list); err != nil {
		c.t.Fatal(err)
	}
	out := map[string]corev1.Node{}
	for _, n := range list.Items {
		out[n.Name] = n
	}
	return out
}

func (c *checker) pods() []corev1.Pod {
	var list corev1.PodList
	if err := c.w.Kube.List(ctx, &list, client.InNamespace(demo.Namespace)); err != nil {
		c.t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

func (c *checker) claims() []v1.NodeClaim {
	var list v1.NodeClaimList
	if err := c.w.Kube.List(ctx, &list); err != nil {
		c.t.Fatal(err)
	}
	return list.Items
}

// instances are the cluster's pending or running instances.
func (c *checker) instances() []ec2types.Instance {
	out, err := ec2.NewFromConfig(c.w.AWS).DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:kubernetes.io/cluster/" + demo.ClusterName), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}})
	if err != nil {
		c.t.Fatal(err)
	}
	var insts []ec2types.Instance
	for _, r := range out.Reservations {
		insts = append(insts, r.Instances...)
	}
	return insts
}

// claimsMatchInstances: one live instance per NodeClaim and the reverse.
func (c *checker) claimsMatchInstances(insts []ec2types.Instance) {
	ids := map[string]bool{}
	for _, i := range insts {
		ids[aws.ToString(i.InstanceId)] = true
	}
	for _, cl := range c.claims() {
		id := cl.Status.ProviderID[strings.LastIndex(cl.Status.ProviderID, "/")+1:]
		if !ids[id] {
			c.t.Errorf("NodeClaim %s has no live instance (%q)", cl.Name, cl.Status.ProviderID)
		}
		delete(ids, id)
	}
	for id := range ids {
		c.t.Errorf("instance %s has no NodeClaim", id)
	}
}

// cost prices instances from the catalog: spot by zone, on-demand by region.
func (c *checker) cost(insts []ec2types.Instance) float64 {
	cat := catalog.MustLoad()
	var sum float64
	for _, i := range insts {
		name, zone := string(i.InstanceType), aws.ToString(i.Placement.AvailabilityZone)
		p, ok := cat.OnDemandPrice(c.w.AWS.Region, name)
		if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
			p, ok = cat.SpotPrice(c.w.AWS.Region, zone, name)
		}
		if !ok {
			c.t.Fatalf("no price for %s in %s", name, zone)
		}
		sum += p
	}
	return sum
}

func tag(i ec2types.Instance, key string) string {
	for _, t := range i.Tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}
