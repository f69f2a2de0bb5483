package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// clusterName is the simulated EKS cluster's name and discovery tag, the
// same in every world: each has an AWS of its own.
const clusterName = "joist-e2e"

// w is the world TestShared's scenarios share; worldOf finds the one a
// scenario runs in.
var w *world

// world is a sandbox with its local AWS and the controller deployed in it.
type world struct {
	name       string
	sandbox    *sandbox.Sandbox
	sim        *awssim.Server
	kube       client.Client
	controller *controllerHandle
}

// worldOptions shape a world.
type worldOptions struct {
	name string
	// replicas of the controller Deployment; the sandbox runs every one.
	replicas int32
	// interruptionQueue creates the queue and its EventBridge rules as
	// joist_interruption_queue does, and points the controller at it.
	interruptionQueue bool
	// ipFamily of the EKS cluster: "ipv4" (default) or "ipv6".
	ipFamily string
}

// parallelScenarios is how many scenarios run at once unless -test.parallel
// says otherwise: they wait on timers and on other processes, not on this
// one's CPU, and the worlds of their own must not starve the shared one.
const parallelScenarios = 6

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", fmt.Sprint(parallelScenarios))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	code := m.Run()
	if w != nil {
		w.stop(code != 0)
	}
	return code
}

// TestShared runs the scenarios of the shared world, while the scenarios
// that need a world of their own run beside it. The groups that change what
// every scenario depends on (a controller restart, AWS faults and latency,
// AMI releases) run one after another; the groups whose scenarios touch only
// their own pools, classes and instances then run together (within every
// group, scenarios run in parallel, at most parallelScenarios at once).
func TestShared(t *testing.T) {
	t.Parallel()
	var err error
	if w, err = startWorld(context.Background(), worldOptions{name: "shared", replicas: 1}); err != nil {
		t.Fatal(err)
	}
	t.Run("provisioning", testProvisioning)
	t.Run("disruption", testDisruption)
	t.Run("safety", testSafety)
	for _, g := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"reserved-capacity", testReservedCapacity},
		{"ec2net", testEC2Networking},
		{"faults", testSharedFaults},
		{"health", testHealth},
		{"metrics", testMetrics},
		{"static", testStatic},
		{"balanced", testBalanced},
		{"nodeoverlay", testNodeOverlay},
	} {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t)
		})
	}
}

var (
	worldsMu sync.Mutex
	worlds   = map[string]*world{} // top-level test -> the world it started
)

// worldOf is the world of t's top-level test: one it started with ownWorld,
// else the shared one.
func worldOf(t testing.TB) *world {
	root, _, _ := strings.Cut(t.Name(), "/")
	worldsMu.Lock()
	defer worldsMu.Unlock()
	if own := worlds[root]; own != nil {
		return own
	}
	return w
}

// ownWorld starts a world for the calling top-level test (and its
// subtests, through worldOf), for scenarios that change what every
// scenario of a world depends on: the controller's processes, the control
// plane, AWS as a whole. It stops when the test ends, keeping its logs if
// the test failed.
func ownWorld(t *testing.T, opts worldOptions) *world {
	t.Helper()
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("ownWorld is for top-level tests, not %s", t.Name())
	}
	own, err := startWorld(context.Background(), opts)
	if err != nil {
		if own != nil {
			own.stop(true)
		}
		t.Fatal(err)
	}
	worldsMu.Lock()
	worlds[t.Name()] = own
	worldsMu.Unlock()
	t.Cleanup(func() {
		own.stop(t.Failed())
		worldsMu.Lock()
		delete(worlds, t.Name())
		worldsMu.Unlock()
	})
	return own
}

// startWorld brings up the sandbox with awssim, and deploys the controller
// as joist_controller deploys it; the sandbox runs the real binary (`make
// build`) as each of the Deployment's pods.
func startWorld(ctx context.Context, opts worldOptions) (*world, error) {
	bin, err := sandbox.FindBinDir()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(bin, "terraform-provider-joist")); err != nil {
		return nil, fmt.Errorf("%s not found: run `make build` first", filepath.Join(bin, "terraform-provider-joist"))
	}
	out := &world{name: opts.name}
	t0 := time.Now()
	var progress io.Writer = io.Discard
	if testing.Verbose() {
		progress = prefixed{os.Stderr, "e2e " + opts.name + ": "}
	}
	if out.sandbox, err = sandbox.Start(ctx, sandbox.Options{
		BinDir: bin, Progress: progress, RunControllers: true, EveryReplica: true, SystemNodes: 2,
		AWS: &awssim.Options{ClusterName: clusterName, BootDelay: 0, IPFamily: opts.ipFamily},
	}); err != nil {
		return out, err
	}
	out.sim = out.sandbox.AWS
	scheme, err := operator.Scheme()
	if err != nil {
		return out, err
	}
	if out.kube, err = client.New(out.sandbox.Config, client.Options{Scheme: scheme}); err != nil {
		return out, err
	}
	if err := createNodeRole(ctx, out.sim); err != nil {
		return out, err
	}
	// StaticCapacity, NodeOverlay and NodeRepair (off by default, as in
	// Karpenter) for their scenarios: with no static pool, no overlay and no
	// node unhealthy past a repair policy's toleration they change nothing.
	settings := map[string]string{"CLUSTER_NAME": clusterName, "FEATURE_GATES": "StaticCapacity=true,NodeOverlay=true,NodeRepair=true"}
	if opts.interruptionQueue {
		if err := createInterruptionQueue(ctx, out.sim); err != nil {
			return out, err
		}
		settings["INTERRUPTION_QUEUE"] = interruptionQueue
	}
	replicas := max(opts.replicas, 1)
	if err := out.sandbox.DeployController(ctx, controllerdeploy.Spec{
		Image: "ghcr.io/joistdev/" + sandbox.ControllerImage + ":e2e", Replicas: replicas, Settings: settings,
	}); err != nil {
		return out, err
	}
	out.controller = &controllerHandle{sb: out.sandbox}
	fmt.Fprintf(os.Stderr, "e2e: world %s up in %s (sandbox %s, AWS %s, %d controller replicas)\n",
		opts.name, time.Since(t0).Round(time.Millisecond), out.sandbox.Dir, out.sim.URL(), replicas)
	return out, nil
}

// interruptionQueue is the queue's name in worlds that have one.
const interruptionQueue = clusterName

// createInterruptionQueue creates the queue, its policy and the
// EventBridge rules that feed it, as joist_interruption_queue does.
func createInterruptionQueue(ctx context.Context, sim *awssim.Server) error {
	cfg := sim.AWSConfig()
	arn := fmt.Sprintf("arn:aws:sqs:%s:%s:%s", sim.Options().Region, sim.Options().AccountID, interruptionQueue)
	if _, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(interruptionQueue), Attributes: map[string]string{
		"MessageRetentionPeriod": fmt.Sprint(queue.MessageRetentionSeconds), "SqsManagedSseEnabled": "true", "Policy": queue.QueuePolicy(arn, interruptionQueue),
	}}); err != nil {
		return fmt.Errorf("creating the interruption queue: %w", err)
	}
	eb := eventbridge.NewFromConfig(cfg)
	for _, r := range queue.Rules {
		name := r.RuleName(interruptionQueue)
		if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventPattern: aws.String(r.Pattern())}); err != nil {
			return fmt.Errorf("creating rule %s: %w", name, err)
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name),
			Targets: []ebtypes.Target{{Id: aws.String("interruption-queue"), Arn: aws.String(arn)}}}); err != nil {
			return fmt.Errorf("targeting rule %s at the queue: %w", name, err)
		}
	}
	return nil
}

// nodeRole is the IAM role EC2NodeClasses name; the node class controller
// wraps it in an instance profile.
const nodeRole = "KarpenterNodeRole-" + clusterName

func createNodeRole(ctx context.Context, sim *awssim.Server) error {
	_, err := iam.NewFromConfig(sim.AWSConfig()).CreateRole(ctx, &iam.CreateRoleInput{
		RoleName: aws.String(nodeRole),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",` +
			`"Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	if err != nil {
		return fmt.Errorf("creating the node role: %w", err)
	}
	return nil
}

// stop stops the world; with keepLogs its component logs (the controller's
// included) are copied out of the sandbox before it removes its directory.
func (w *world) stop(keepLogs bool) {
	if keepLogs && w.sandbox != nil {
		w.keepLogs()
	}
	if w.sandbox != nil {
		_ = w.sandbox.Stop()
	}
}

func (w *world) keepLogs() {
	src := filepath.Join(w.sandbox.Dir, "logs")
	entries, err := os.ReadDir(src)
	if err != nil {
		return
	}
	dst, err := os.MkdirTemp("", "joist-e2e-"+w.name+"-")
	if err != nil {
		return
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil {
			_ = os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: world %s: component logs (the controller's included) kept in %s\n", w.name, dst)
}

// prefixed writes each line with a prefix, so the worlds' progress can be
// told apart.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		if l != "" {
			out.WriteString(p.prefix + l)
		}
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}
