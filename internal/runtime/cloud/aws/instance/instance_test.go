package instance_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instance"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

var (
	sim      *testenv.Sim
	ec2c     *ec2.Client
	template string
	subnet   ec2types.Subnet
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if sim, err = testenv.Start(awssim.Options{ClusterName: cluster}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	ec2c = ec2.NewFromConfig(sim.Config)
	ctx := context.Background()
	subnets, err := ec2c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{cluster}}}})
	if err != nil || len(subnets.Subnets) == 0 {
		fmt.Fprintln(os.Stderr, "no discoverable subnet:", err)
		return 1
	}
	subnet = subnets.Subnets[0]
	template = "batch-test"
	if _, err := ec2c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(template),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(sim.EC2.Images()[0].ImageID)},
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

func request(claim, instanceType string) instance.Request {
	return instance.Request{
		CapacityType: "on-demand",
		Tags: map[string]string{
			"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
			"karpenter.sh/nodepool": "batch", "karpenter.k8s.aws/ec2nodeclass": "default", instance.NodeClaimTag: claim,
		},
		Templates: []instance.TemplateOverrides{{TemplateName: template, Overrides: []instance.Override{
			{InstanceType: instanceType, SubnetID: aws.ToString(subnet.SubnetId), Zone: aws.ToString(subnet.AvailabilityZone), Price: 0.1},
		}}},
	}
}

// launchAll launches n claims concurrently through a provider that flushes
// exactly when all n wait.
func launchAll(t *testing.T, p *instance.Provider, instanceType string, n int) ([]*instance.Instance, []error) {
	t.Helper()
	insts, errs := make([]*instance.Instance, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			insts[i], errs[i] = p.Launch(context.Background(), request(fmt.Sprintf("%s-claim-%d", instanceType, i), instanceType))
		}()
	}
	wg.Wait()
	return insts, errs
}

func claimTag(t *testing.T, id string) string {
	t.Helper()
	out, err := ec2c.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range out.Reservations[0].Instances[0].Tags {
		if aws.ToString(tag.Key) == instance.NodeClaimTag {
			return aws.ToString(tag.Value)
		}
	}
	return ""
}

func TestConcurrentLaunchesShareOneFleet(t *testing.T) {
	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{Idle: time.Minute, Max: time.Minute, MaxItems: 4})
	before := sim.Requests().Count("ec2", "CreateFleet")
	insts, errs := launchAll(t, p, "m5.large", 4)
	if got := sim.Requests().Count("ec2", "CreateFleet") - before; got != 1 {
		t.Errorf("%d CreateFleet calls for 4 concurrent launches, want 1", got)
	}
	seen := map[string]bool{}
	for i, inst := range insts {
		if errs[i] != nil {
			t.Fatalf("launch %d: %v", i, errs[i])
		}
		if seen[inst.ID] {
			t.Errorf("instance %s handed to two launches", inst.ID)
		}
		seen[inst.ID] = true
		want := fmt.Sprintf("m5.large-claim-%d", i)
		if got := claimTag(t, inst.ID); got != want || inst.Tags[instance.NodeClaimTag] != want {
			t.Errorf("instance %s claim tag = %q (returned %q), want %q", inst.ID, got, inst.Tags[instance.NodeClaimTag], want)
		}
	}
}

// TestBatchTagsItsClaimsAtOnce: a batch's claim tags are written side by
// side, not one after another. Each CreateTags answer is held 300 ms, so
// calls made in turn could never overlap.
func TestBatchTagsItsClaimsAtOnce(t *testing.T) {
	f, err := sim.Faults().Add(fault.Fault{Service: "ec2", Operation: "CreateTags", Kind: fault.ResponseLatency, Latency: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Faults().Remove(f.ID)
	before := len(sim.Requests().Requests("ec2", "CreateTags"))
	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{Idle: time.Minute, Max: time.Minute, MaxItems: 6})
	insts, errs := launchAll(t, p, "m5.xlarge", 6)
	for i, inst := range insts {
		if errs[i] != nil {
			t.Fatalf("launch %d: %v", i, errs[i])
		}
		if want := fmt.Sprintf("m5.xlarge-claim-%d", i); claimTag(t, inst.ID) != want {
			t.Errorf("instance %s claim tag %q, want %q", inst.ID, claimTag(t, inst.ID), want)
		}
	}
	tags := sim.Requests().Requests("ec2", "CreateTags")[before:]
	if len(tags) != 6 {
		t.Fatalf("%d CreateTags calls, want one per claim: 6", len(tags))
	}
	overlapping := 0
	for i, a := range tags {
		for _, b := range tags[i+1:] {
			if b.Time.Before(a.Time.Add(a.Duration)) && a.Time.Before(b.Time.Add(b.Duration)) {
				overlapping++
			}
		}
	}
	if overlapping == 0 {
		t.Errorf("no two of the batch's CreateTags calls overlapped: they were made one after another")
	}
}

func TestBatchShortOfCapacityFailsTheRest(t *testing.T) {
	zone := aws.ToString(subnet.AvailabilityZone)
	if err := sim.EC2.SetCapacity("c5.large", zone, "on-demand", 2); err != nil {
		t.Fatal(err)
	}
	unavailable := cache.NewUnavailableOfferings()
	p := instance.New(ec2c, cluster, unavailable, instance.BatchOptions{Idle: time.Minute, Max: time.Minute, MaxItems: 4})
	insts, errs := launchAll(t, p, "c5.large", 4)
	launched, short := 0, 0
	for i := range insts {
		switch {
		case errs[i] == nil:
			launched++
		case cloud.IsInsufficientCapacity(errs[i]):
			short++
		default:
			t.Errorf("launch %d: %v", i, errs[i])
		}
	}
	if launched != 2 || short != 2 {
		t.Errorf("launched %d and %d short, want 2 and 2", launched, short)
	}
	if !unavailable.IsUnavailable("c5.large", zone, "on-demand") {
		t.Error("the exhausted pool is not marked unavailable")
	}
}

func TestSingleLaunchTagsAtCreation(t *testing.T) {
	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{MaxItems: 1, Idle: time.Minute, Max: time.Minute})
	before := sim.Requests().Count("ec2", "CreateTags")
	inst, err := p.Launch(context.Background(), request("single", "m5.xlarge"))
	if err != nil {
		t.Fatal(err)
	}
	if got := claimTag(t, inst.ID); got != "single" {
		t.Errorf("claim tag = %q", got)
	}
	if n := sim.Requests().Count("ec2", "CreateTags") - before; n != 0 {
		t.Errorf("%d CreateTags calls for a launch that was alone", n)
	}
	if _, err := instance.ParseProviderID(inst.ProviderID()); err != nil {
		t.Error(err)
	}
}

// TestRecentDescribesOnceAndForgetsTerminated: Recent answers from the last
// description while it is fresh, so repeated drift checks of one instance
// cost one DescribeInstances; a terminated instance is described anew.
func TestRecentDescribesOnceAndForgetsTerminated(t *testing.T) {
	ctx := context.Background()
	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{MaxItems: 1})
	inst, err := p.Launch(ctx, request("recent", "m5.large"))
	if err != nil {
		t.Fatal(err)
	}
	before := sim.Requests().Count("ec2", "DescribeInstances")
	for range 5 {
		got, err := p.Recent(ctx, inst.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != inst.ID || got.ImageID == "" {
			t.Fatalf("Recent returned %+v", got)
		}
	}
	if n := sim.Requests().Count("ec2", "DescribeInstances") - before; n != 1 {
		t.Errorf("5 Recent calls made %d DescribeInstances calls, want 1", n)
	}
	if err := p.Terminate(ctx, inst.ID); err != nil {
		t.Fatal(err)
	}
	before = sim.Requests().Count("ec2", "DescribeInstances")
	_, _ = p.Recent(ctx, inst.ID)
	if n := sim.Requests().Count("ec2", "DescribeInstances") - before; n != 1 {
		t.Errorf("Recent after Terminate made %d DescribeInstances calls, want 1 (a fresh description)", n)
	}
}

func TestRecentListsTheClusterOnceForManyInstances(t *testing.T) {
	ctx := context.Background()
	launcher := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{MaxItems: 1})
	var ids []string
	for i := range 4 {
		inst, err := launcher.Launch(ctx, request(fmt.Sprintf("listed-%d", i), "m5.large"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, inst.ID)
	}
	// A provider with nothing cached, as after a restart or once the
	// descriptions expire.
	p := instance.New(ec2c, cluster, cache.NewUnavailableOfferings(), instance.BatchOptions{MaxItems: 1})
	before := sim.Requests().Count("ec2", "DescribeInstances")
	for _, id := range ids {
		got, err := p.Recent(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != id || got.ImageID == "" || got.SubnetID == "" {
			t.Fatalf("Recent(%s) returned %+v", id, got)
		}
	}
	if n := sim.Requests().Count("ec2", "DescribeInstances") - before; n != 1 {
		t.Errorf("Recent for %d instances made %d DescribeInstances calls, want 1 (one listing)", len(ids), n)
	}
	// An instance launched after the listing is described by ID, without
	// listing everything again.
	late, err := launcher.Launch(ctx, request("listed-late", "m5.large"))
	if err != nil {
		t.Fatal(err)
	}
	before = sim.Requests().Count("ec2", "DescribeInstances")
	if got, err := p.Recent(ctx, late.ID); err != nil || got.ID != late.ID {
		t.Fatalf("Recent(%s) = %+v, %v", late.ID, got, err)
	}
	if n := sim.Requests().Count("ec2", "DescribeInstances") - before; n != 1 {
		t.Errorf("Recent for an instance launched after the listing made %d calls, want 1", n)
	}
}
