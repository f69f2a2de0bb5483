package launchtemplate

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"golang.org/x/sync/errgroup"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// The package's tests start awssim themselves: internal/testenv imports
// the AWS provider, which imports this package.
var (
	sim  *awssim.Server
	ec2c *ec2.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	if sim, err = awssim.Start(ctx, awssim.Options{ClusterName: "blue"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	ec2c = ec2.NewFromConfig(sim.AWSConfig())
	return m.Run()
}

// clock is a settable time for a provider.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func provider(cluster string) (*Provider, *clock) {
	p := New(ec2c, cluster)
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	p.now = c.now
	return p, c
}

func config(nodeClass, pool, ami string) Config {
	return Config{
		NodeClass: nodeClass, AMIID: ami,
		Tags: map[string]string{"karpenter.sh/nodepool": pool, "team": "platform"},
	}
}

// templates lists the names of the templates tagged for a node class.
func templates(t *testing.T, nodeClass string) []string {
	t.Helper()
	out, err := ec2c.DescribeLaunchTemplates(context.Background(), &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.k8s.aws/ec2nodeclass"), Values: []string{nodeClass}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, lt := range out.LaunchTemplates {
		names = append(names, aws.ToString(lt.LaunchTemplateName))
	}
	sort.Strings(names)
	return names
}

func ami(t *testing.T) string { t.Helper(); return sim.EC2.Images()[0].ImageID }

func TestNamesAreUniquePerClusterAndNodeClass(t *testing.T) {
	blue, _ := provider("blue")
	green, _ := provider("green")
	cfg := config("default", "general", "ami-1")
	other := cfg
	other.NodeClass = "gpu"
	names := map[string]bool{blue.Name(cfg): true, green.Name(cfg): true, blue.Name(other): true}
	if len(names) != 3 {
		t.Errorf("names %v: want one per cluster and node class", names)
	}
	for n := range names {
		if len(n) > 128 || !strings.HasPrefix(n, NamePrefix) {
			t.Errorf("name %q", n)
		}
	}
	if blue.Name(cfg) != blue.Name(config("default", "general", "ami-1")) {
		t.Error("equal configurations got different names")
	}
}

// TestUnusedTemplatesAreDeletedHeldOnesKept: a template a launch holds is
// kept however old; released, it goes CacheTTL after its last use. One
// made by an earlier process is kept CacheTTL from when it is first seen.
func TestUnusedTemplatesAreDeletedHeldOnesKept(t *testing.T) {
	ctx := context.Background()
	p, clk := provider("blue")
	held, err := p.Ensure(ctx, config("gc", "a", ami(t)))
	if err != nil {
		t.Fatal(err)
	}
	released, err := p.Ensure(ctx, config("gc", "b", ami(t)))
	if err != nil {
		t.Fatal(err)
	}
	p.Release(released)
	// An earlier process's template.
	earlier, _ := provider("blue")
	old, err := earlier.Ensure(ctx, config("gc", "c", ami(t)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.Collect(ctx); err != nil || n != 0 {
		t.Fatalf("first pass deleted %d (%v), want 0", n, err)
	}
	clk.t = clk.t.Add(CacheTTL)
	if n, err := p.Collect(ctx); err != nil || n != 2 {
		t.Fatalf("pass after the TTL deleted %d (%v), want the released and the earlier process's", n, err)
	}
	if got := templates(t, "gc"); len(got) != 1 || got[0] != held {
		t.Fatalf("templates left %v, want only the held %s (released %s, earlier %s)", got, held, released, old)
	}
	p.Release(held)
	clk.t = clk.t.Add(CacheTTL)
	if n, err := p.Collect(ctx); err != nil || n != 1 {
		t.Fatalf("after release: deleted %d (%v)", n, err)
	}
	// Used again, it is recreated.
	again, err := p.Ensure(ctx, config("gc", "a", ami(t)))
	if err != nil || again != held {
		t.Fatalf("recreate: %q, %v", again, err)
	}
	if got := templates(t, "gc"); len(got) != 1 {
		t.Fatalf("templates after recreation: %v", got)
	}
}

// TestTemplatesPerNodeClassAreCapped: a node class never has more than
// MaxPerNodeClass templates: the least recently used are deleted before a
// new one is created, even within the TTL. Templates launches hold are
// never deleted, so only they can take it past the bound, until released.
// Other node classes are not touched.
func TestTemplatesPerNodeClassAreCapped(t *testing.T) {
	ctx := context.Background()
	p, clk := provider("blue")
	ensure := func(i int) string {
		t.Helper()
		cfg := config("capped", "a", ami(t))
		cfg.UserData = fmt.Sprintf("#%d", i)
		name, err := p.Ensure(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(time.Second)
		return name
	}
	var names []string
	for i := 0; i < MaxPerNodeClass+3; i++ {
		name := ensure(i)
		p.Release(name)
		names = append(names, name)
		if n := len(templates(t, "capped")); n > MaxPerNodeClass {
			t.Fatalf("%d templates after %d launches; the bound is %d", n, i+1, MaxPerNodeClass)
		}
	}
	left := map[string]bool{}
	for _, n := range templates(t, "capped") {
		left[n] = true
	}
	if len(left) != MaxPerNodeClass {
		t.Fatalf("%d templates left, want %d", len(left), MaxPerNodeClass)
	}
	for _, n := range names[:3] {
		if left[n] {
			t.Errorf("the least recently used %s was kept", n)
		}
	}
	// Launches holding more templates than the bound keep them all.
	var held []string
	for i := 0; i < MaxPerNodeClass+2; i++ {
		held = append(held, ensure(1000+i))
	}
	if n := len(templates(t, "capped")); n != MaxPerNodeClass+2 {
		t.Fatalf("%d templates while %d are held", n, MaxPerNodeClass+2)
	}
	for _, name := range held {
		p.Release(name)
	}
	other, err := p.Ensure(ctx, config("neighbour", "a", ami(t)))
	if err != nil {
		t.Fatal(err)
	}
	p.Release(other)
	if _, err := p.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(templates(t, "capped")); n != MaxPerNodeClass {
		t.Errorf("%d templates after the launches released them, want %d", n, MaxPerNodeClass)
	}
	if len(templates(t, "neighbour")) != 1 {
		t.Error("another node class's template was deleted")
	}
}

// TestOthersTemplatesAreNeverDeletedOrUsed: templates of another cluster,
// or without the NodePool tag, survive Collect and DeleteAll, and a
// template of another cluster with the name this one wants is not used.
func TestOthersTemplatesAreNeverDeletedOrUsed(t *testing.T) {
	ctx := context.Background()
	p, clk := provider("blue")
	create := func(name string, tags map[string]string) {
		t.Helper()
		var list []ec2types.Tag
		for k, v := range tags {
			list = append(list, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		if _, err := ec2c.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
			LaunchTemplateName: aws.String(name), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami(t))},
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: list}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	green, _ := provider("green")
	squatted := config("shared", "a", ami(t))
	// Green's template under the name blue's configuration hashes to.
	create(p.Name(squatted), map[string]string{"kubernetes.io/cluster/green": "owned", "eks:eks-cluster-name": "green", "karpenter.sh/nodepool": "a", "karpenter.k8s.aws/ec2nodeclass": "shared"})
	create(green.Name(config("shared", "b", ami(t))), map[string]string{"kubernetes.io/cluster/green": "owned", "eks:eks-cluster-name": "green", "karpenter.sh/nodepool": "b", "karpenter.k8s.aws/ec2nodeclass": "shared"})
	// Blue's cluster tags but no NodePool tag: not the runtime's.
	create(NamePrefix+"hand-made", map[string]string{"kubernetes.io/cluster/blue": "owned", "eks:eks-cluster-name": "blue", "karpenter.k8s.aws/ec2nodeclass": "shared"})

	if _, err := p.Ensure(ctx, squatted); err == nil || !strings.Contains(err.Error(), "not cluster blue's") {
		t.Errorf("Ensure over another cluster's template: %v, want an error", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := p.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(CacheTTL)
	}
	if err := p.DeleteAll(ctx, "shared"); err != nil {
		t.Fatal(err)
	}
	if got := templates(t, "shared"); len(got) != 3 {
		t.Errorf("templates left %v, want the 3 that are not cluster blue's runtime's", got)
	}
}

// Claims launched together for one configuration share one describe and
// one create of its template instead of racing to create it (each losing
// racer paid a failed CreateLaunchTemplate), and each still holds it.
func TestConcurrentEnsuresShareOneCreate(t *testing.T) {
	p, _ := provider("blue")
	cfg := config("together", "general", ami(t))
	describes := sim.Requests().Count("ec2", "DescribeLaunchTemplates")
	creates := sim.Requests().Count("ec2", "CreateLaunchTemplate")
	const launches = 20
	var g errgroup.Group
	for range launches {
		g.Go(func() error {
			_, err := p.Ensure(context.Background(), cfg)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	d := sim.Requests().Count("ec2", "DescribeLaunchTemplates") - describes
	c := sim.Requests().Count("ec2", "CreateLaunchTemplate") - creates
	t.Logf("%d concurrent launches: %d DescribeLaunchTemplates, %d CreateLaunchTemplate", launches, d, c)
	if d != 1 || c != 1 {
		t.Errorf("%d concurrent launches made %d DescribeLaunchTemplates and %d CreateLaunchTemplate calls, want 1 and 1", launches, d, c)
	}
	if got := templates(t, "together"); len(got) != 1 {
		t.Errorf("templates %v, want one", got)
	}
	if held := p.uses[p.Name(cfg)].launches; held != launches {
		t.Errorf("template held by %d launches, want %d", held, launches)
	}
}

// karpenterTemplate makes a template as Karpenter running beside the
// runtime does: the runtime's cluster, NodePool and EC2NodeClass tags and
// name prefix, but no CreatorTag.
func karpenterTemplate(t *testing.T, name, nodeClass string) {
	t.Helper()
	if _, err := ec2c.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name), LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(ami(t))},
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeLaunchTemplate, Tags: []ec2types.Tag{
			{Key: aws.String("kubernetes.io/cluster/blue"), Value: aws.String("owned")},
			{Key: aws.String("eks:eks-cluster-name"), Value: aws.String("blue")},
			{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("a")},
			{Key: aws.String("karpenter.k8s.aws/ec2nodeclass"), Value: aws.String(nodeClass)},
		}}},
	}); err != nil {
		t.Fatal(err)
	}
}

// TestCollectLeavesKarpentersTemplates: Collect deletes the runtime's
// unused templates and never Karpenter's, however long unused.
func TestCollectLeavesKarpentersTemplates(t *testing.T) {
	ctx := context.Background()
	p, clk := provider("blue")
	karpenters := NamePrefix + "karpenter-collect"
	karpenterTemplate(t, karpenters, "beside-collect")
	own, err := p.Ensure(ctx, config("beside-collect", "a", ami(t)))
	if err != nil {
		t.Fatal(err)
	}
	p.Release(own)
	for i := 0; i < 2; i++ {
		if _, err := p.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		clk.t = clk.t.Add(CacheTTL)
	}
	if got := templates(t, "beside-collect"); len(got) != 1 || got[0] != karpenters {
		t.Fatalf("after Collect: templates %v, want only Karpenter's %s (the runtime's %s collected)", got, karpenters, own)
	}
}

// TestDeleteAllLeavesKarpentersTemplates: deleting a node class's
// templates deletes the runtime's and never Karpenter's of the same node
// class.
func TestDeleteAllLeavesKarpentersTemplates(t *testing.T) {
	ctx := context.Background()
	p, _ := provider("blue")
	karpenters := NamePrefix + "karpenter-deleteall"
	karpenterTemplate(t, karpenters, "beside-deleteall")
	if _, err := p.Ensure(ctx, config("beside-deleteall", "a", ami(t))); err != nil {
		t.Fatal(err)
	}
	if err := p.DeleteAll(ctx, "beside-deleteall"); err != nil {
		t.Fatal(err)
	}
	if got := templates(t, "beside-deleteall"); len(got) != 1 || got[0] != karpenters {
		t.Fatalf("after DeleteAll: templates %v, want only Karpenter's %s", got, karpenters)
	}
}
