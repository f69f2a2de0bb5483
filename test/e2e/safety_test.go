package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	appsv1 "k8s.io/api/apps/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/launchtemplate"
)

// TestSafety: the runtime in an account it shares, under EC2's eventual
// consistency and AWS's transient failures. The scenarios change the
// whole simulated AWS (visibility delay, faults, AMI releases), so they
// run one after another.
func testSafety(t *testing.T) {
	nodeClass(t, "safety")
	t.Run("eventual-consistency", testEventualConsistency)
	t.Run("transient-errors", testTransientErrors)
	t.Run("role-change", testRoleChange)
	t.Run("launch-templates", testLaunchTemplates)
}

// safetyPool is an on-demand-or-spot amd64 c/m/r pool on class, deleted
// (with its nodes) when the scenario ends.
func safetyPool(t *testing.T, name, class string, budgets ...v1.Budget) {
	t.Helper()
	np := nodePool(t, name, class, nil, spotAndOnDemand, amd64, categoriesCMR)
	if len(budgets) > 0 {
		patch := client.MergeFrom(np.DeepCopy())
		np.Spec.Disruption.Budgets = budgets
		if err := worldOf(t).kube.Patch(context.Background(), np, patch); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = worldOf(t).kube.Delete(context.Background(), np) })
}

// terminatedSince are the instance IDs TerminateInstances calls named
// since a time.
func terminatedSince(since time.Time) map[string]bool {
	out := map[string]bool{}
	for _, r := range w.sim.Requests().Requests("ec2", "TerminateInstances") {
		if r.Time.Before(since) {
			continue
		}
		for k, v := range r.Parameters {
			if strings.HasPrefix(k, "InstanceId.") {
				out[fmt.Sprint(v)] = true
			}
		}
	}
	return out
}

// everInPool are the IDs of the pool's instances in any state, terminated
// ones included.
func everInPool(t *testing.T, pool string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	pager := ec2.NewDescribeInstancesPaginator(ec2.NewFromConfig(worldOf(t).sim.AWSConfig()), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
	}})
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("DescribeInstances: %v", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out[aws.ToString(i.InstanceId)] = true
			}
		}
	}
	return out
}

// waitAllRunning waits until want pods of the namespace are Running.
func waitAllRunning(t *testing.T, ns string, want int) {
	t.Helper()
	eventually(t, fmt.Sprintf("%d pods Running in %s", want, ns), func() (bool, string) {
		n, waiting := running(pods(t, ns, nil))
		return n == want, fmt.Sprintf("%d/%d running; %s", n, want, waiting)
	})
}

// testEventualConsistency: with new instances invisible to Describe calls
// for 45 s and every CreateFleet answering after 35 s, a scale-out of 20
// pods ends with every pod Running, every NodeClaim it created alive and
// no instance terminated; a stopped instance tagged for the cluster that
// no NodeClaim owns is then terminated.
func testEventualConsistency(t *testing.T) {
	const pool, replicas = "consistency", 20
	ns := scenarioNamespace(t, "e2e-consistency")
	safetyPool(t, pool, "safety")
	w.sim.EC2.SetVisibilityDelay(45 * time.Second)
	t.Cleanup(func() { w.sim.EC2.SetVisibilityDelay(0) })
	held, err := w.sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "CreateFleet", Kind: fault.ResponseLatency, Latency: 35 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.sim.Faults().Remove(held.ID) })
	start := time.Now()

	create(t, deployment(ns, "pause", replicas, podSpec(pool, requests("1", "1.5Gi"))))
	waitRunning(t, ns, replicas)
	// Every launched instance visible and past the garbage collector's age
	// threshold: from here on each pass sees them all.
	eventually(t, "every nodeclaim's instance visible to DescribeInstances", func() (bool, string) {
		claims, insts := claimsOf(t, pool), instances(t, pool)
		return len(insts) == len(claims), fmt.Sprintf("%d of %d instances visible", len(insts), len(claims))
	})
	claims := claimsOf(t, pool)

	// A stopped orphan, tagged like the runtime's own instances: launched
	// now, so the pass that terminates it (past 30 s of age) also sees
	// every instance of the scale-out.
	orphan := runOrphan(t, pool)
	ec2c := ec2.NewFromConfig(w.sim.AWSConfig())
	eventually(t, "the orphan running", func() (bool, string) {
		s := instanceStateOf(t, orphan)
		return s == ec2types.InstanceStateNameRunning, string(s)
	})
	if _, err := ec2c.StopInstances(context.Background(), &ec2.StopInstancesInput{InstanceIds: []string{orphan}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the stopped orphan terminated", func() (bool, string) {
		s := instanceStateOf(t, orphan)
		return s == ec2types.InstanceStateNameShuttingDown || s == ec2types.InstanceStateNameTerminated, string(s)
	})

	n, waiting := running(pods(t, ns, map[string]string{"app": "pause"}))
	if n != replicas {
		t.Errorf("%d/%d pods Running after the scale-out: %s", n, replicas, waiting)
	}
	after := claimsOf(t, pool)
	if len(after) != len(claims) {
		t.Errorf("%d nodeclaims after the orphan's collection, %d before", len(after), len(claims))
	}
	created, _, err := w.controller.metric(fmt.Sprintf(`karpenter_nodeclaims_created_total{min_values_relaxed="false",nodepool=%q,reason="provisioned"}`, pool))
	if err != nil || int(created) != len(after) {
		t.Errorf("the provisioner created %v nodeclaims (%v); %d exist: some were deleted", created, err, len(after))
	}
	for _, c := range after {
		if c.DeletionTimestamp != nil {
			t.Errorf("nodeclaim %s is being deleted", c.Name)
		}
		if gc := runtimeEvents(t, "default", c.Name, "GarbageCollected"); len(gc) > 0 {
			t.Errorf("nodeclaim %s was garbage collected: %s", c.Name, gc[0].Note)
		}
	}
	var terminated []string
	gone := terminatedSince(start)
	for id := range everInPool(t, pool) {
		if gone[id] && id != orphan {
			terminated = append(terminated, id)
		}
	}
	if len(terminated) > 0 {
		t.Errorf("instances of the scale-out were terminated: %v", terminated)
	}
	t.Logf("%d pods on %d nodeclaims with 45 s visibility delay and 35 s CreateFleet latency; 0 collected; stopped orphan %s terminated", replicas, len(after), orphan)
}

// runOrphan launches an on-demand instance outside the runtime with the
// tags the runtime gives its own, and no claim.
func runOrphan(t *testing.T, pool string) string {
	t.Helper()
	ec2c := ec2.NewFromConfig(worldOf(t).sim.AWSConfig())
	var tags []ec2types.Tag
	for k, v := range map[string]string{
		"kubernetes.io/cluster/" + clusterName: "owned", "eks:eks-cluster-name": clusterName,
		v1.NodePoolLabelKey: pool, v1.LabelNodeClass: "safety",
	} {
		tags = append(tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	n := worldOf(t).sim.EC2.Network()
	out, err := ec2c.RunInstances(context.Background(), &ec2.RunInstancesInput{
		ImageId: aws.String(worldOf(t).sim.EC2.Images()[0].ImageID), InstanceType: ec2types.InstanceTypeM5Large,
		MinCount: aws.Int32(1), MaxCount: aws.Int32(1), SubnetId: aws.String(n.PrivateSubnetIDs[0]),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Instances[0].InstanceId)
}

// instanceStateOf is the state DescribeInstances reports, empty while the
// instance is not visible yet.
func instanceStateOf(t *testing.T, id string) ec2types.InstanceStateName {
	t.Helper()
	out, err := ec2.NewFromConfig(worldOf(t).sim.AWSConfig()).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) == 0 {
		return ""
	}
	return out.Reservations[0].Instances[0].State.Name
}

// testTransientErrors: for at least 60 s every DescribeSubnets answers 500
// and every SSM GetParameters (an AMI alias's reads) is throttled. The EC2NodeClass and its
// NodePool stay Ready, pods created meanwhile get nodes, no NodeClaim is
// deleted, and events name both failing calls.
func testTransientErrors(t *testing.T) {
	const pool, replicas = "transient", 6
	ns := scenarioNamespace(t, "e2e-transient")
	safetyPool(t, pool, "safety")
	d := deployment(ns, "pause", 0, podSpec(pool, requests("1", "1.5Gi")))
	create(t, d)

	var faults []fault.Fault
	for _, f := range []fault.Fault{
		{Service: "ec2", Operation: "DescribeSubnets", Kind: fault.ServerError},
		{Service: "ssm", Operation: "GetParameters", Kind: fault.Throttle},
	} {
		added, err := w.sim.Faults().Add(f)
		if err != nil {
			t.Fatal(err)
		}
		faults = append(faults, added)
		t.Cleanup(func() { w.sim.Faults().Remove(added.ID) })
	}
	start := time.Now()
	var mu sync.Mutex
	var lapses []string
	stop := observe(500*time.Millisecond, func() {
		nc, np := &awsv1.EC2NodeClass{}, &v1.NodePool{}
		ctx := context.Background()
		if err := w.kube.Get(ctx, client.ObjectKey{Name: "safety"}, nc); err != nil {
			return
		}
		if err := w.kube.Get(ctx, client.ObjectKey{Name: pool}, np); err != nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeReady); c == nil || c.Status != "True" {
			lapses = append(lapses, fmt.Sprintf("EC2NodeClass Ready=%v at +%s", c, time.Since(start).Round(time.Second)))
		}
		if !meta.IsStatusConditionTrue(np.Status.Conditions, v1.ConditionTypeReady) {
			lapses = append(lapses, fmt.Sprintf("NodePool not Ready at +%s", time.Since(start).Round(time.Second)))
		}
	})
	defer stop()
	scale(t, d, replicas)
	eventually(t, "pods Running and both failing calls reported, at least 60 s into the faults", func() (bool, string) {
		n, waiting := running(pods(t, ns, map[string]string{"app": "pause"}))
		subnets, ssm := transientEvents(t)
		return n == replicas && subnets && ssm && time.Since(start) >= 60*time.Second,
			fmt.Sprintf("%d/%d running (%s); events: DescribeSubnets %v, GetParameters %v; %s into the faults", n, replicas, waiting, subnets, ssm, time.Since(start).Round(time.Second))
	})
	for _, f := range w.sim.Faults().List() {
		for _, mine := range faults {
			if f.ID == mine.ID {
				t.Logf("%s %s %s fired %d times", f.Service, f.Operation, f.Kind, f.Fired)
				if f.Fired == 0 {
					t.Errorf("the %s %s fault never fired; the scenario tested nothing", f.Service, f.Operation)
				}
			}
		}
	}
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(lapses) > 0 {
		t.Errorf("%d lapses during transient errors, first: %s", len(lapses), lapses[0])
	}
	for _, c := range claimsOf(t, pool) {
		if c.DeletionTimestamp != nil {
			t.Errorf("nodeclaim %s deleted during transient errors", c.Name)
		}
	}
	created, _, _ := w.controller.metric(fmt.Sprintf(`karpenter_nodeclaims_created_total{min_values_relaxed="false",nodepool=%q,reason="provisioned"}`, pool))
	if n := len(claimsOf(t, pool)); int(created) != n {
		t.Errorf("%v nodeclaims created, %d exist", created, n)
	}
}

// transientEvents reports whether the safety node class has events naming
// DescribeSubnets and SSM GetParameters as transient failures.
func transientEvents(t *testing.T) (subnets, ssm bool) {
	t.Helper()
	list := &eventsv1.EventList{}
	if err := w.kube.List(context.Background(), list); err != nil {
		t.Fatalf("listing events: %v", err)
	}
	for _, e := range list.Items {
		if e.Regarding.Name != "safety" || e.Reason != "TransientAWSError" {
			continue
		}
		subnets = subnets || strings.Contains(e.Note, "EC2 DescribeSubnets")
		ssm = ssm || strings.Contains(e.Note, "SSM GetParameters")
	}
	return subnets, ssm
}

// testRoleChange: the EC2NodeClass's role changes from A to B. Running
// nodes keep the profile holding A until drift replaces them; new nodes
// launch with a new profile holding B; A's profile is deleted only after
// its last instance is gone.
func testRoleChange(t *testing.T) {
	const class, pool = "roles", "roles"
	ctx := context.Background()
	iamc := iam.NewFromConfig(w.sim.AWSConfig())
	roleB := nodeRole + "-b"
	if _, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{
		RoleName:                 aws.String(roleB),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	}); err != nil {
		t.Fatal(err)
	}
	nc := nodeClass(t, class)
	ns := scenarioNamespace(t, "e2e-roles")
	safetyPool(t, pool, class)
	spec := podSpec(pool, requests("1", "1Gi"))
	hostnameAntiAffinity(&spec, "pause")
	create(t, deployment(ns, "pause", 2, spec))
	waitRunning(t, ns, 2)

	if err := w.kube.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}
	profileA := nc.Status.InstanceProfile
	oldInstances := instances(t, pool)
	for id, inst := range oldInstances {
		if got := profileName(inst); got != profileA {
			t.Fatalf("instance %s runs with profile %q, want %q", id, got, profileA)
		}
	}
	if got := profileRoles(t, profileA); !slices.Equal(got, []string{nodeRole}) {
		t.Fatalf("profile %s holds %v", profileA, got)
	}

	patch := client.MergeFrom(nc.DeepCopy())
	nc.Spec.Role = roleB
	if err := w.kube.Patch(ctx, nc, patch); err != nil {
		t.Fatal(err)
	}
	var profileB string
	eventually(t, "the node class on a new profile", func() (bool, string) {
		got := &awsv1.EC2NodeClass{}
		if err := w.kube.Get(ctx, client.ObjectKey{Name: class}, got); err != nil {
			return false, err.Error()
		}
		profileB = got.Status.InstanceProfile
		return profileB != "" && profileB != profileA, "status.instanceProfile " + profileB
	})
	if got := profileRoles(t, profileB); !slices.Equal(got, []string{roleB}) {
		t.Errorf("new profile %s holds %v, want [%s]", profileB, got, roleB)
	}

	// While any node of role A runs, its profile must exist and hold A.
	var mu sync.Mutex
	var violations []string
	var deletedWhileInUse []string
	stop := observe(500*time.Millisecond, func() {
		live := liveInstances(t, oldInstances)
		roles, err := profileRolesErr(profileA)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err != nil && len(live) > 0:
			deletedWhileInUse = append(deletedWhileInUse, fmt.Sprintf("profile gone (%v) with %v live", err, live))
		case err == nil && len(live) > 0 && !slices.Equal(roles, []string{nodeRole}):
			// Once the last instance is gone the collector takes the role
			// out before deleting the profile: an empty profile then is
			// the deletion under way, not a swap.
			violations = append(violations, fmt.Sprintf("profile %s holds %v", profileA, roles))
		}
	})
	defer stop()
	eventually(t, "every node replaced by one on the new profile", func() (bool, string) {
		insts := instances(t, pool)
		onB := 0
		for _, inst := range insts {
			if profileName(inst) == profileB {
				onB++
			}
		}
		live := liveInstances(t, oldInstances)
		return onB == 2 && len(insts) == 2 && len(live) == 0, fmt.Sprintf("%d/%d instances on %s; old still live: %v", onB, len(insts), profileB, live)
	})
	waitRunning(t, ns, 2)
	eventually(t, "role A's profile deleted after its last instance", func() (bool, string) {
		_, err := profileRolesErr(profileA)
		var nf *iamtypes.NoSuchEntityException
		return errors.As(err, &nf), fmt.Sprintf("GetInstanceProfile %s: %v", profileA, err)
	})
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(violations) > 0 {
		t.Errorf("role A's profile changed while nodes used it: %v", violations[0])
	}
	if len(deletedWhileInUse) > 0 {
		t.Errorf("role A's profile deleted while instances ran with it: %v", deletedWhileInUse[0])
	}
	if got := profileRoles(t, profileB); !slices.Equal(got, []string{roleB}) {
		t.Errorf("profile %s holds %v after the rollout", profileB, got)
	}
	t.Logf("role %s -> %s: profile %s -> %s; old profile deleted after its instances", nodeRole, roleB, profileA, profileB)
}

func profileName(inst ec2types.Instance) string {
	if inst.IamInstanceProfile == nil {
		return ""
	}
	return instanceprofile.NameFromARN(aws.ToString(inst.IamInstanceProfile.Arn))
}

func profileRoles(t *testing.T, name string) []string {
	t.Helper()
	roles, err := profileRolesErr(name)
	if err != nil {
		t.Fatalf("GetInstanceProfile %s: %v", name, err)
	}
	return roles
}

func profileRolesErr(name string) ([]string, error) {
	out, err := iam.NewFromConfig(w.sim.AWSConfig()).GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		return nil, err
	}
	var roles []string
	for _, r := range out.InstanceProfile.Roles {
		roles = append(roles, aws.ToString(r.RoleName))
	}
	return roles, nil
}

// liveInstances are those of the given instances not yet terminated.
func liveInstances(t *testing.T, of map[string]ec2types.Instance) []string {
	t.Helper()
	var ids []string
	for _, inst := range of {
		ids = append(ids, aws.ToString(inst.InstanceId))
	}
	out, err := ec2.NewFromConfig(worldOf(t).sim.AWSConfig()).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: ids})
	if err != nil {
		return ids // cannot tell: count them live
	}
	var live []string
	for _, r := range out.Reservations {
		for _, i := range r.Instances {
			if i.State.Name != ec2types.InstanceStateNameTerminated {
				live = append(live, aws.ToString(i.InstanceId))
			}
		}
	}
	return live
}

// testLaunchTemplates: ten AMI releases, each rolled out to three pools
// of one EC2NodeClass by a new node per pool. The node class's launch
// templates never exceed launchtemplate.MaxPerNodeClass (50), and a minute
// after the last release every template left was made for it: the older
// ones, unused, were deleted. Templates that are not the runtime's (another
// cluster's, or without a NodePool tag) survive.
func testLaunchTemplates(t *testing.T) {
	const class, releases = "templates", 10
	ctx := context.Background()
	nc := nodeClass(t, class)
	pools := []string{"lt-a", "lt-b", "lt-c"}
	noDrift := v1.Budget{Nodes: "0", Reasons: []v1.DisruptionReason{v1.DisruptionReasonDrifted}}
	ns := scenarioNamespace(t, "e2e-templates")
	var deployments []*appsv1.Deployment
	for _, p := range pools {
		safetyPool(t, p, class, noDrift)
		spec := podSpec(p, requests("1", "1Gi"))
		hostnameAntiAffinity(&spec, p)
		d := deployment(ns, p, 1, spec)
		create(t, d)
		deployments = append(deployments, d)
	}
	waitAllRunning(t, ns, len(pools))

	ec2c := ec2.NewFromConfig(w.sim.AWSConfig())
	decoy := func(name string, tags map[string]string) {
		var list []ec2types.Tag
		for k, v := range tags {
			list = append(list, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		if _, err := ec2c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(name), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(w.sim.EC2.Images()[0].ImageID)},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: list}},
		}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = ec2c.DeleteLaunchTemplate(context.Background(), &ec2.DeleteLaunchTemplateInput{LaunchTemplateName: aws.String(name)})
		})
	}
	decoys := []string{launchtemplate.NamePrefix + "other-cluster", launchtemplate.NamePrefix + "no-nodepool"}
	decoy(decoys[0], map[string]string{"kubernetes.io/cluster/other": "owned", "eks:eks-cluster-name": "other", v1.NodePoolLabelKey: "lt-a", v1.LabelNodeClass: class})
	decoy(decoys[1], map[string]string{"kubernetes.io/cluster/" + clusterName: "owned", "eks:eks-cluster-name": clusterName, v1.LabelNodeClass: class})

	var mu sync.Mutex
	most := 0
	stop := observe(500*time.Millisecond, func() {
		lts, err := ownTemplates(class, decoys)
		if err != nil {
			return
		}
		n := len(lts)
		mu.Lock()
		most = max(most, n)
		mu.Unlock()
	})
	defer stop()
	var lastRelease time.Time
	for i := 1; i <= releases; i++ {
		rel, err := w.sim.PublishAMI("al2023", "x86_64", "standard")
		if err != nil {
			t.Fatal(err)
		}
		// Pin the node class to the release, as a user rolling AMIs by ID
		// does; the status follows at once.
		if err := w.kube.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(nc.DeepCopy())
		nc.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{ID: rel.ImageID}}
		nc.Spec.AMIFamily = aws.String(awsv1.AMIFamilyAL2023)
		if err := w.kube.Patch(ctx, nc, patch); err != nil {
			t.Fatal(err)
		}
		eventually(t, "status on "+rel.ImageID, func() (bool, string) {
			got := &awsv1.EC2NodeClass{}
			if err := w.kube.Get(ctx, client.ObjectKey{Name: class}, got); err != nil {
				return false, err.Error()
			}
			return len(got.Status.AMIs) == 1 && got.Status.AMIs[0].ID == rel.ImageID && meta.IsStatusConditionTrue(got.Status.Conditions, v1.ConditionTypeReady),
				fmt.Sprintf("AMIs %v", got.Status.AMIs)
		})
		lastRelease = time.Now()
		for _, d := range deployments {
			scale(t, d, int32(i+1))
		}
		waitAllRunning(t, ns, len(pools)*(i+1))
		mu.Lock()
		t.Logf("release %d (%s): %d pods running; most templates so far %d", i, rel.ImageID, len(pools)*(i+1), most)
		mu.Unlock()
	}
	eventually(t, "only templates made since the last release left", func() (bool, string) {
		lts, err := ownTemplates(class, decoys)
		if err != nil {
			return false, err.Error()
		}
		var older []string
		for _, lt := range lts {
			if aws.ToTime(lt.CreateTime).Before(lastRelease.Add(-time.Second)) {
				older = append(older, aws.ToString(lt.LaunchTemplateName))
			}
		}
		return len(older) == 0, fmt.Sprintf("%d templates from earlier releases: %v", len(older), older)
	})
	stop()
	lts, err := ownTemplates(class, decoys)
	if err != nil {
		t.Fatal(err)
	}
	left := len(lts)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d AMI releases over %d pools: at most %d launch templates at once (bound %d), %d left after the last release", releases, len(pools), most, launchtemplate.MaxPerNodeClass, left)
	if most > launchtemplate.MaxPerNodeClass {
		t.Errorf("%d launch templates at once for one EC2NodeClass; the bound is %d", most, launchtemplate.MaxPerNodeClass)
	}
	for _, name := range decoys {
		out, err := ec2c.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{name}})
		if err != nil || len(out.LaunchTemplates) != 1 {
			t.Errorf("launch template %s, not the runtime's, is gone: %v", name, err)
		}
	}
}

// ownTemplates are the launch templates tagged for the node class, but
// the decoys.
func ownTemplates(class string, decoys []string) ([]ec2types.LaunchTemplate, error) {
	pager := ec2.NewDescribeLaunchTemplatesPaginator(ec2.NewFromConfig(w.sim.AWSConfig()), &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.LabelNodeClass), Values: []string{class}},
	}})
	var own []ec2types.LaunchTemplate
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			return nil, fmt.Errorf("DescribeLaunchTemplates: %w", err)
		}
		for _, lt := range page.LaunchTemplates {
			if !slices.Contains(decoys, aws.ToString(lt.LaunchTemplateName)) {
				own = append(own, lt)
			}
		}
	}
	return own, nil
}
