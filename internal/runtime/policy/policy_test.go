package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var testParams = Params{
	Region: "us-west-2", AccountID: "123456789012", ClusterName: "demo",
	NodeRoleARN: "arn:aws:iam::123456789012:role/demo-node", QueueName: "demo",
	QueueKMSKeyARN: "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab",
}

// sdkCall matches an SDK operation's input type (ec2.CreateFleetInput) or
// paginator (ec2.NewDescribeSubnetsPaginator) in runtime source.
var sdkCall = regexp.MustCompile(`\b(ec2|sqs|iam|ssm|pricing|eks)\.(?:New([A-Z]\w*)Paginator|([A-Z]\w*)Input)\b`)

// runtimeCalls scans the runtime's non-test Go source for AWS SDK calls.
func runtimeCalls(t *testing.T) map[string][]string {
	t.Helper()
	calls := map[string][]string{}
	err := filepath.WalkDir("..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// Not runtime code: this package, and the test support package.
		if d.IsDir() && (d.Name() == "policy" || d.Name() == "awstest") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range sdkCall.FindAllStringSubmatch(string(src), -1) {
			op := m[2] + m[3]
			call := m[1] + ":" + op
			calls[call] = append(calls[call], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

func TestEveryRuntimeCallIsGrantedAndEveryGrantIsUsed(t *testing.T) {
	calls := runtimeCalls(t)
	if len(calls) < 10 {
		t.Fatalf("found only %d SDK calls in the runtime source; the scan is broken", len(calls))
	}
	for call, files := range calls {
		if len(ActionsFor(call)) == 0 {
			t.Errorf("runtime call %s (in %v) has no action in policy.Rules; add one with NeededBy %q", call, files, call)
		}
	}
	for _, call := range Calls() {
		if _, ok := calls[call]; !ok {
			t.Errorf("policy.Rules grants actions for %s, which no runtime code calls; remove the grant", call)
		}
	}
}

func TestRenderedPolicyIsScopedAndValidJSON(t *testing.T) {
	doc, err := Render(testParams)
	if err != nil {
		t.Fatal(err)
	}
	var back Document
	if err := json.Unmarshal([]byte(doc.JSON()), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Statement) != len(Rules) {
		t.Fatalf("statements = %d, want %d", len(back.Statement), len(Rules))
	}
	mutating := regexp.MustCompile(`^(ec2:(Create|Run|Terminate|Delete)|iam:(Create|Tag|Add|Remove|Delete|Pass))`)
	for _, s := range back.Statement {
		for _, a := range s.Action {
			if !mutating.MatchString(a) {
				continue
			}
			// Resources the call creates or changes must be scoped by tag;
			// launch inputs (images, subnets, ...) only by region.
			created := regexp.MustCompile(`:(instance|fleet|volume|network-interface|launch-template|spot-instances-request|instance-profile)/`)
			for _, r := range s.Resource {
				if created.MatchString(r) && len(s.Condition) == 0 {
					t.Errorf("%s grants mutating %s on %s without a condition", s.Sid, a, r)
				}
			}
			for _, r := range s.Resource {
				if r == "*" {
					t.Errorf("%s grants mutating %s on every resource", s.Sid, a)
				}
				if strings.HasPrefix(r, "arn:aws:ec2:") && !strings.HasPrefix(r, "arn:aws:ec2:us-west-2:") {
					t.Errorf("%s: %s is not scoped to the region", s.Sid, r)
				}
			}
		}
	}
	noQueue := testParams
	noQueue.QueueName, noQueue.QueueKMSKeyARN = "", ""
	d2, _ := Render(noQueue)
	for _, a := range d2.Actions() {
		if strings.HasPrefix(a, "sqs:") {
			t.Errorf("without a queue the policy still grants %s", a)
		}
	}
	if _, err := Render(Params{ClusterName: "x"}); err == nil || !strings.Contains(err.Error(), "node_role_arn") {
		t.Errorf("Render without inputs: err = %v, want one naming node_role_arn", err)
	}
}

func TestSplitKeepsEveryStatementWithinTheLimit(t *testing.T) {
	doc, _ := Render(testParams)
	for _, max := range []int{ManagedPolicyMaxSize, 2500, 1500} {
		parts, err := Split(doc, max)
		if err != nil {
			t.Fatalf("max %d: %v", max, err)
		}
		var sids []string
		for _, p := range parts {
			if p.Size() > max {
				t.Errorf("max %d: a part is %d characters", max, p.Size())
			}
			for _, s := range p.Statement {
				sids = append(sids, s.Sid)
			}
		}
		var want []string
		for _, s := range doc.Statement {
			want = append(want, s.Sid)
		}
		sort.Strings(sids)
		sort.Strings(want)
		if strings.Join(sids, ",") != strings.Join(want, ",") {
			t.Errorf("max %d: statements %v, want %v", max, sids, want)
		}
		if max < doc.Size() && len(parts) < 2 {
			t.Errorf("max %d < size %d but not split", max, doc.Size())
		}
	}
	if _, err := Split(doc, 100); err == nil {
		t.Error("Split to 100 characters succeeded")
	}
}

func ec2Tags(tags map[string]string) map[string][]string {
	ctx := map[string][]string{}
	for k, v := range tags {
		ctx["aws:RequestTag/"+k] = []string{v}
		ctx["aws:TagKeys"] = append(ctx["aws:TagKeys"], k)
	}
	return ctx
}

func with(ctx map[string][]string, kv ...string) map[string][]string {
	out := map[string][]string{}
	for k, v := range ctx {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = append(out[kv[i]], kv[i+1])
	}
	return out
}

func TestPolicyDecisions(t *testing.T) {
	doc, _ := Render(testParams)
	owned := ec2Tags(map[string]string{"kubernetes.io/cluster/demo": "owned", "eks:eks-cluster-name": "demo", "karpenter.sh/nodepool": "default"})
	ownedRes := map[string][]string{"aws:ResourceTag/kubernetes.io/cluster/demo": {"owned"}, "aws:ResourceTag/karpenter.sh/nodepool": {"default"}}
	otherRes := map[string][]string{"aws:ResourceTag/kubernetes.io/cluster/other": {"owned"}, "aws:ResourceTag/karpenter.sh/nodepool": {"default"}}
	arn := func(kind string) string { return "arn:aws:ec2:us-west-2:123456789012:" + kind + "/x-1" }
	cases := []struct {
		name string
		req  Request
		want bool
	}{
		{"fleet with cluster tags", Request{"ec2:CreateFleet", arn("instance"), owned}, true},
		{"fleet without nodepool tag", Request{"ec2:CreateFleet", arn("instance"), ec2Tags(map[string]string{"kubernetes.io/cluster/demo": "owned", "eks:eks-cluster-name": "demo"})}, false},
		{"fleet in another region", Request{"ec2:CreateFleet", "arn:aws:ec2:eu-west-1:123456789012:instance/x", owned}, false},
		{"fleet reads a subnet", Request{"ec2:CreateFleet", "arn:aws:ec2:us-west-2::subnet/subnet-1", nil}, true},
		{"fleet uses an owned template", Request{"ec2:CreateFleet", arn("launch-template"), ownedRes}, true},
		{"fleet uses a foreign template", Request{"ec2:CreateFleet", arn("launch-template"), otherRes}, false},
		{"tag on create", Request{"ec2:CreateTags", arn("volume"), with(owned, "ec2:CreateAction", "CreateFleet")}, true},
		{"tag on create outside a launch", Request{"ec2:CreateTags", arn("volume"), with(owned, "ec2:CreateAction", "CreateVolume")}, false},
		{"tag a node after registration", Request{"ec2:CreateTags", arn("instance"), with(ownedRes, "aws:TagKeys", "karpenter.sh/nodeclaim", "aws:TagKeys", "Name")}, true},
		{"tag a node with another key", Request{"ec2:CreateTags", arn("instance"), with(ownedRes, "aws:TagKeys", "team")}, false},
		{"tag a node with its cluster's name", Request{"ec2:CreateTags", arn("instance"), with(ownedRes, "aws:TagKeys", "eks:eks-cluster-name", "aws:RequestTag/eks:eks-cluster-name", "demo", "aws:TagKeys", "Name")}, true},
		{"tag a node with another cluster's name", Request{"ec2:CreateTags", arn("instance"), with(ownedRes, "aws:TagKeys", "eks:eks-cluster-name", "aws:RequestTag/eks:eks-cluster-name", "prod")}, false},
		{"tag another cluster's node", Request{"ec2:CreateTags", arn("instance"), with(otherRes, "aws:TagKeys", "Name")}, false},
		{"terminate own instance", Request{"ec2:TerminateInstances", arn("instance"), ownedRes}, true},
		{"terminate foreign instance", Request{"ec2:TerminateInstances", arn("instance"), otherRes}, false},
		{"terminate untagged instance", Request{"ec2:TerminateInstances", arn("instance"), nil}, false},
		{"describe in region", Request{"ec2:DescribeInstances", "*", map[string][]string{"aws:RequestedRegion": {"us-west-2"}}}, true},
		{"describe elsewhere", Request{"ec2:DescribeInstances", "*", map[string][]string{"aws:RequestedRegion": {"us-east-1"}}}, false},
		{"pass node role to ec2", Request{"iam:PassRole", testParams.NodeRoleARN, map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}, true},
		{"pass node role to lambda", Request{"iam:PassRole", testParams.NodeRoleARN, map[string][]string{"iam:PassedToService": {"lambda.amazonaws.com"}}}, false},
		{"pass admin role", Request{"iam:PassRole", "arn:aws:iam::123456789012:role/admin", map[string][]string{"iam:PassedToService": {"ec2.amazonaws.com"}}}, false},
		{"receive from queue", Request{"sqs:ReceiveMessage", "arn:aws:sqs:us-west-2:123456789012:demo", nil}, true},
		{"receive from another queue", Request{"sqs:ReceiveMessage", "arn:aws:sqs:us-west-2:123456789012:orders", nil}, false},
		{"ssm public parameter", Request{"ssm:GetParameter", "arn:aws:ssm:us-west-2::parameter/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id", nil}, true},
		{"ssm private parameter", Request{"ssm:GetParameter", "arn:aws:ssm:us-west-2:123456789012:parameter/db/password", nil}, false},
		{"describe cluster", Request{"eks:DescribeCluster", "arn:aws:eks:us-west-2:123456789012:cluster/demo", nil}, true},
		{"describe other cluster", Request{"eks:DescribeCluster", "arn:aws:eks:us-west-2:123456789012:cluster/prod", nil}, false},
		{"delete own launch template", Request{"ec2:DeleteLaunchTemplate", arn("launch-template"), ownedRes}, true},
		{"delete foreign launch template", Request{"ec2:DeleteLaunchTemplate", arn("launch-template"), otherRes}, false},
		{"list instance profiles", Request{"iam:ListInstanceProfiles", "*", nil}, true},
		{"unknown action", Request{"ec2:DeleteVpc", "*", nil}, false},
	}
	profileTags := map[string]string{"kubernetes.io/cluster/demo": "owned", "eks:eks-cluster-name": "demo", "topology.kubernetes.io/region": "us-west-2", "karpenter.k8s.aws/ec2nodeclass": "default"}
	profile := "arn:aws:iam::123456789012:instance-profile/karpenter/us-west-2/demo/uid/demo_1"
	profileRes := map[string][]string{}
	for k, v := range profileTags {
		profileRes["aws:ResourceTag/"+k] = []string{v}
	}
	cases = append(cases,
		struct {
			name string
			req  Request
			want bool
		}{"create profile", Request{"iam:CreateInstanceProfile", profile, ec2Tags(profileTags)}, true},
		struct {
			name string
			req  Request
			want bool
		}{"tag profile on create", Request{"iam:TagInstanceProfile", profile, merge2(ec2Tags(profileTags), profileRes)}, true},
		struct {
			name string
			req  Request
			want bool
		}{"add role to own profile", Request{"iam:AddRoleToInstanceProfile", profile, profileRes}, true},
		struct {
			name string
			req  Request
			want bool
		}{"add role to foreign profile", Request{"iam:AddRoleToInstanceProfile", profile, nil}, false},
		struct {
			name string
			req  Request
			want bool
		}{"delete own profile", Request{"iam:DeleteInstanceProfile", profile, profileRes}, true},
		struct {
			name string
			req  Request
			want bool
		}{"delete another region's profile", Request{"iam:DeleteInstanceProfile", profile, merge2(profileRes, map[string][]string{"aws:ResourceTag/topology.kubernetes.io/region": {"eu-west-1"}})}, false},
		struct {
			name string
			req  Request
			want bool
		}{"remove role from foreign profile", Request{"iam:RemoveRoleFromInstanceProfile", profile, nil}, false},
	)
	for _, c := range cases {
		got, err := doc.Allows(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: allowed = %v, want %v", c.name, got, c.want)
		}
	}
}

func merge2(a, b map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, m := range []map[string][]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func TestEvaluatorDenyWinsAndRejectsUnknownOperators(t *testing.T) {
	doc := Document{Statement: []Statement{
		{Sid: "a", Effect: "Allow", Action: []string{"sqs:*"}, Resource: []string{"*"}},
		{Sid: "d", Effect: "Deny", Action: []string{"sqs:*"}, Resource: []string{"*"}, Condition: Condition{"Bool": {"aws:SecureTransport": {"false"}}}},
	}}
	if ok, _ := doc.Allows(Request{Action: "sqs:SendMessage", Resource: "q", Context: map[string][]string{"aws:SecureTransport": {"true"}}}); !ok {
		t.Error("TLS request denied")
	}
	if ok, _ := doc.Allows(Request{Action: "sqs:SendMessage", Resource: "q", Context: map[string][]string{"aws:SecureTransport": {"false"}}}); ok {
		t.Error("plain-text request allowed")
	}
	bad := Document{Statement: []Statement{{Sid: "x", Effect: "Allow", Action: []string{"*"}, Resource: []string{"*"}, Condition: Condition{"DateGreaterThan": {"aws:CurrentTime": {"2020"}}}}}}
	if _, err := bad.Allows(Request{Action: "a:b", Resource: "r"}); err == nil {
		t.Error("unsupported operator evaluated without error")
	}
}

// With the queue's KMS key the controller may decrypt the queue's messages
// through SQS, and nothing else: no other key, not outside SQS, no data
// keys of its own. Without a key no KMS action is granted; a key named by
// alias or ID is refused, naming the field.
func TestQueueKeyGrantIsScopedToTheKey(t *testing.T) {
	key := testParams.QueueKMSKeyARN
	viaSQS := map[string][]string{"kms:ViaService": {"sqs.us-west-2.amazonaws.com"}}
	doc, err := Render(testParams)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		req  Request
		want bool
	}{
		{Request{Action: "kms:Decrypt", Resource: key, Context: viaSQS}, true},
		{Request{Action: "kms:Decrypt", Resource: key}, false},
		{Request{Action: "kms:Decrypt", Resource: key, Context: map[string][]string{"kms:ViaService": {"ec2.us-west-2.amazonaws.com"}}}, false},
		{Request{Action: "kms:Decrypt", Resource: "arn:aws:kms:us-west-2:123456789012:key/other", Context: viaSQS}, false},
		{Request{Action: "kms:GenerateDataKey", Resource: key, Context: viaSQS}, false},
	} {
		if got, err := doc.Allows(tc.req); err != nil || got != tc.want {
			t.Errorf("%s on %s (%v): allowed %v (err %v), want %v", tc.req.Action, tc.req.Resource, tc.req.Context, got, err, tc.want)
		}
	}
	plain := testParams
	plain.QueueKMSKeyARN = ""
	d, err := Render(plain)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range d.Actions() {
		if strings.HasPrefix(a, "kms:") {
			t.Errorf("without a queue key the policy grants %s", a)
		}
	}
	for _, bad := range []string{"alias/joist", "arn:aws:kms:us-west-2:123456789012:alias/joist", "1234abcd-12ab-34cd-56ef-1234567890ab"} {
		p := testParams
		p.QueueKMSKeyARN = bad
		if _, err := Render(p); err == nil || !strings.Contains(err.Error(), "interruption_queue_kms_key_arn") {
			t.Errorf("key %q: err = %v, want a refusal naming interruption_queue_kms_key_arn", bad, err)
		}
	}
}
