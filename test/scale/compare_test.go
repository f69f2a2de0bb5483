package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
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
	eventbridgetypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// karpenterNodeRole is the node role Karpenter's getting-started guide creates.
const karpenterNodeRole = "KarpenterNodeRole-" + clusterName

// side is one controller's results over the compared scenarios.
type side struct {
	Name                string
	Out, In             row
	OutTypes, InTypes   string
	Consolidation       time.Duration // scale-in start to the pool's last NodeClaim change
	Leaked              int           // instances not terminated once the pool is gone
	Errors              []logError
	FidelityRegressions []logError
}

// logError is one distinct error a controller logged, with how often.
type logError struct {
	Message, Error string
	Count          int
}

// TestCompare runs `make scale`'s scale-out and scale-in on upstream
// Karpenter (a local process against the sandbox, with its own CRDs, node
// role, queue and rules as its getting-started guide creates them), then on
// Joist, and writes one side-by-side table into docs/performance.md. Every
// error Karpenter logs is reported; one caused by an awssim answer (an AWS
// API error the SDK returned to it) fails the run.
//
// `make compare` sets JOIST_COMPARE_KARPENTER (the controller binary
// hack/compare/build.sh builds), JOIST_COMPARE_CRDS (the release's CRD
// directory) and JOIST_COMPARE_VERSION. JOIST_COMPARE_SIZE=small runs 100
// pods instead of 1,000, and a pod count (e.g. 5000) that many, scaled in
// to 70%; only the 1,000-pod run writes the table. JOIST_COMPARE_SIDE=joist runs Joist's side alone
// and prints its rows without writing the table.
func TestCompare(t *testing.T) {
	bin := os.Getenv("JOIST_COMPARE_KARPENTER")
	if bin == "" {
		t.Skip("`make compare` runs this: JOIST_COMPARE_KARPENTER names upstream Karpenter's controller binary (hack/compare/build.sh builds it)")
	}
	crdDir, version := os.Getenv("JOIST_COMPARE_CRDS"), os.Getenv("JOIST_COMPARE_VERSION")
	outPods, inPods, err := compareSize(os.Getenv("JOIST_COMPARE_SIZE"))
	if err != nil {
		t.Fatal(err)
	}
	// The sandboxes' envtest logs through controller-runtime: quietly.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if os.Getenv("JOIST_COMPARE_SIDE") == "joist" {
		s := compareJoist(ctx, t, outPods, inPods)
		fmt.Printf("compare: Joist: consolidation %s\n", s.Consolidation.Round(100*time.Millisecond))
		return
	}
	karpenter := compareKarpenter(ctx, t, bin, crdDir, outPods, inPods)
	joist := compareJoist(ctx, t, outPods, inPods)
	table := compareTable(version, outPods, inPods, karpenter, joist)
	fmt.Println(table)
	if outPods == 1000 {
		if err := writeCompareSection(table); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range karpenter.FidelityRegressions {
		t.Errorf("Karpenter got an AWS API error from awssim %d time(s): %s: %s", e.Count, e.Message, e.Error)
	}
}

// compareSize is the scale-out's and the scale-in's pod counts for
// JOIST_COMPARE_SIZE: "" 1,000 to 700, "small" 100 to 72, or a count n
// (a multiple of 4, as mixed splits it) to 70% of n.
func compareSize(size string) (out, in int32, err error) {
	switch size {
	case "":
		return 1000, 700, nil
	case "small":
		return 100, 72, nil
	}
	n, err := strconv.Atoi(size)
	if err != nil || n < 100 || n%4 != 0 {
		return 0, 0, fmt.Errorf("JOIST_COMPARE_SIZE is %q; use small, or a pod count of 100 or more that is a multiple of 4", size)
	}
	return int32(n), int32(n * 7 / 10 / 4 * 4), nil
}

// compareKarpenter boots a sandbox without Joist, sets AWS and the cluster up
// as Karpenter's getting-started guide does, runs the controller and the
// scenarios.
func compareKarpenter(ctx context.Context, t *testing.T, bin, crdDir string, outPods, inPods int32) side {
	w, proc, logPath, err := startKarpenterWorld(ctx, bin, crdDir, "karpenter")
	if w != nil {
		defer w.stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer stopProcess(proc)

	nc := nodeClass("scale")
	nc.Spec.Role = karpenterNodeRole
	if err := w.kube.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	waitNodeClassReady(ctx, t, w)
	s := w.compareScenarios(ctx, t, "Karpenter", outPods, inPods)
	stopProcess(proc)
	if s.Errors, err = controllerErrors(logPath); err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Errors {
		if awsAPIError.MatchString(e.Error) || awsAPIError.MatchString(e.Message) {
			s.FidelityRegressions = append(s.FidelityRegressions, e)
		}
	}
	return s
}

// startKarpenterWorld boots a sandbox without Joist (its state under
// JOIST_SCALE_DIR/dirName when that is set), sets AWS and the cluster up as
// Karpenter's getting-started guide does, and runs the controller. The world
// is returned whenever the sandbox started, for the caller to stop. env is
// added to the controller's environment.
func startKarpenterWorld(ctx context.Context, bin, crdDir, dirName string, env ...string) (*world, *exec.Cmd, string, error) {
	binDir, err := sandbox.FindBinDir()
	if err != nil {
		return nil, nil, "", err
	}
	dir := os.Getenv("JOIST_SCALE_DIR")
	if dir != "" {
		dir = filepath.Join(dir, dirName)
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{
		BinDir: binDir, Dir: dir, Progress: progressWriter(), SystemNodes: 2, NodeLeaseSeconds: nodeLeaseSeconds,
		AWS: &awssim.Options{ClusterName: clusterName, DefaultPoolCapacity: 100000},
	})
	if err != nil {
		return nil, nil, "", err
	}
	w := &world{sb: sb, cs: kubernetes.NewForConfigOrDie(sb.Config), costOnly: true, callsBy: sandbox.ControllerAccessKeyID}
	scheme, err := operator.Scheme()
	if err != nil {
		return w, nil, "", err
	}
	if w.kube, err = client.New(sb.Config, client.Options{Scheme: scheme}); err != nil {
		return w, nil, "", err
	}
	if err := installCRDs(ctx, sb, crdDir); err != nil {
		return w, nil, "", err
	}
	if err := gettingStarted(ctx, sb); err != nil {
		return w, nil, "", err
	}
	logPath := filepath.Join(sb.Dir, "logs", "karpenter.log")
	proc, err := startKarpenter(ctx, sb, bin, logPath, env...)
	if err != nil {
		return w, nil, "", err
	}
	w.pid = proc.Process.Pid
	return w, proc, logPath, nil
}

// compareJoist runs the scenarios on Joist, deployed as in `make scale`.
func compareJoist(ctx context.Context, t *testing.T, outPods, inPods int32) side {
	w, err := startWorld(ctx, progressWriter(), true, nil)
	if w != nil {
		defer w.stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	w.costOnly, w.callsBy = true, sandbox.ControllerAccessKeyID
	if err := w.kube.Create(ctx, nodeClass("scale")); err != nil {
		t.Fatal(err)
	}
	waitNodeClassReady(ctx, t, w)
	s := w.compareScenarios(ctx, t, "Joist", outPods, inPods)
	if c := w.sb.Controllers(); len(c) > 0 {
		if s.Errors, err = controllerErrors(c[0].Log); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// compareScenarios is the scale-out, the scale-in and the teardown.
func (w *world) compareScenarios(ctx context.Context, t *testing.T, name string, outPods, inPods int32) side {
	s := side{Name: name}
	wls := mixed("mix", outPods)
	var ns string
	// 20 minutes a thousand pods, as at the 1,000-pod size.
	timeout := time.Duration(max(1, outPods/1000)) * 20 * time.Minute
	s.Out, ns = w.provision(ctx, t, "scale-out", fmt.Sprintf("scale-out %d pods, mixed sizes", outPods), "mix", wls, "20%", timeout)
	fmt.Printf("compare: %s: %s\n", name, formatRow(s.Out))
	s.OutTypes = w.poolTypes(ctx, t, "mix")
	t0 := time.Now()
	var last time.Time
	s.In, _, last = w.scaleIn(ctx, t, ns, wls, outPods, inPods/4, s.Out)
	s.Consolidation = max(0, last.Sub(t0))
	fmt.Printf("compare: %s: %s\n", name, formatRow(s.In))
	s.InTypes = w.poolTypes(ctx, t, "mix")
	w.teardown(ctx, t, "mix", ns, 15*time.Minute)
	s.Leaked = w.leakedInstances(ctx, t, 2*time.Minute)
	return s
}

// poolTypes summarises the instance types of a pool's nodes, most used first.
func (w *world) poolTypes(ctx context.Context, t *testing.T, pool string) string {
	t.Helper()
	var nodes corev1.NodeList
	if err := w.kube.List(ctx, &nodes, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, n := range nodes.Items {
		count[n.Labels[corev1.LabelInstanceTypeStable]+" "+n.Labels[v1.CapacityTypeLabelKey]]++
	}
	return formatCounts(count, 5, "×")
}

// leakedInstances waits up to grace for every instance of the cluster to
// terminate and returns how many did not.
func (w *world) leakedInstances(ctx context.Context, t *testing.T, grace time.Duration) int {
	t.Helper()
	api := ec2.NewFromConfig(w.sb.AWS.AWSConfig())
	deadline := time.Now().Add(grace)
	for {
		live := 0
		p := ec2.NewDescribeInstancesPaginator(api, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
			{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "shutting-down", "stopping", "stopped"}},
		}})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page.Reservations {
				live += len(r.Instances)
			}
		}
		if live == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(2 * time.Second)
	}
}

// installCRDs applies the CRDs of Karpenter's release.
func installCRDs(ctx context.Context, sb *sandbox.Sandbox, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRDs in %q (JOIST_COMPARE_CRDS): %v", dir, err)
	}
	return installCRDFiles(ctx, sb, files)
}

// gettingStarted creates what Karpenter's getting-started guide creates
// beside the controller: the node role with its managed policies and an EKS
// access entry, and the interruption queue.
func gettingStarted(ctx context.Context, sb *sandbox.Sandbox) error {
	cfg := sb.AWS.AWSConfig()
	iamAPI := iam.NewFromConfig(cfg)
	role, err := createNodeRole(ctx, sb, karpenterNodeRole)
	if err != nil {
		return err
	}
	for _, p := range []string{"AmazonEKS_CNI_Policy", "AmazonEKSWorkerNodePolicy", "AmazonEC2ContainerRegistryPullOnly", "AmazonSSMManagedInstanceCore"} {
		if _, err := iamAPI.AttachRolePolicy(ctx, &iam.AttachRolePolicyInput{RoleName: aws.String(karpenterNodeRole),
			PolicyArn: aws.String("arn:aws:iam::aws:policy/" + p)}); err != nil {
			return fmt.Errorf("attaching %s to the node role: %w", p, err)
		}
	}
	if _, err := eks.NewFromConfig(cfg).CreateAccessEntry(ctx, &eks.CreateAccessEntryInput{
		ClusterName: aws.String(clusterName), PrincipalArn: role.Role.Arn, Type: aws.String("EC2_LINUX"),
	}); err != nil {
		return fmt.Errorf("creating the node role's access entry: %w", err)
	}
	return createInterruptionQueue(ctx, sb, false)
}

// createInterruptionQueue creates the interruption queue named for the
// cluster with its policy, and the EventBridge rules that feed it: for
// Karpenter as its getting-started guide does, for Joist as
// joist_interruption_queue does (the same rules, but the state-change rule
// routes only the states the controller acts on).
func createInterruptionQueue(ctx context.Context, sb *sandbox.Sandbox, joist bool) error {
	cfg := sb.AWS.AWSConfig()
	account, region := sb.AWS.Options().AccountID, sb.AWS.Options().Region
	queueARN := fmt.Sprintf("arn:aws:sqs:%s:%s:%s", region, account, clusterName)
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Id":"EC2InterruptionPolicy","Statement":[{"Effect":"Allow",`+
		`"Principal":{"Service":["events.amazonaws.com","sqs.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":%q}]}`, queueARN)
	type rule struct{ name, pattern string }
	var rules []rule
	if joist {
		policy = queue.QueuePolicy(queueARN, clusterName)
		for _, r := range queue.Rules {
			rules = append(rules, rule{r.RuleName(clusterName), r.Pattern()})
		}
	} else {
		for _, r := range []struct{ name, source, detailType string }{
			{"ScheduledChangeRule", "aws.health", "AWS Health Event"},
			{"SpotInterruptionRule", "aws.ec2", "EC2 Spot Instance Interruption Warning"},
			{"RebalanceRule", "aws.ec2", "EC2 Instance Rebalance Recommendation"},
			{"InstanceStateChangeRule", "aws.ec2", "EC2 Instance State-change Notification"},
			{"CapacityReservationInterruptionRule", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"},
		} {
			pattern, _ := json.Marshal(map[string][]string{"source": {r.source}, "detail-type": {r.detailType}})
			rules = append(rules, rule{clusterName + "-" + r.name, string(pattern)})
		}
	}
	if _, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(clusterName),
		Attributes: map[string]string{"MessageRetentionPeriod": strconv.Itoa(queue.MessageRetentionSeconds), "SqsManagedSseEnabled": "true", "Policy": policy}}); err != nil {
		return fmt.Errorf("creating the interruption queue: %w", err)
	}
	events := eventbridge.NewFromConfig(cfg)
	for _, r := range rules {
		if _, err := events.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(r.name), EventPattern: aws.String(r.pattern)}); err != nil {
			return fmt.Errorf("creating rule %s: %w", r.name, err)
		}
		if _, err := events.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(r.name),
			Targets: []eventbridgetypes.Target{{Id: aws.String("KarpenterInterruptionQueueTarget"), Arn: aws.String(queueARN)}}}); err != nil {
			return fmt.Errorf("targeting rule %s at the queue: %w", r.name, err)
		}
	}
	return nil
}

// startKarpenter runs the controller as a local process against the
// sandbox, with the settings its Helm chart gives it (and env over them),
// and waits until it is healthy.
func startKarpenter(ctx context.Context, sb *sandbox.Sandbox, bin, logPath string, env ...string) (*exec.Cmd, error) {
	var ports [2]int // metrics, health probe
	for i := range ports {
		var err error
		if ports[i], err = sandbox.FreePort(); err != nil {
			return nil, err
		}
	}
	metrics, health := ports[0], ports[1]
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range sb.Env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env,
		// The controller's own key, so its calls are told apart in the log.
		"AWS_ACCESS_KEY_ID="+sandbox.ControllerAccessKeyID,
		"CLUSTER_NAME="+clusterName, "INTERRUPTION_QUEUE="+clusterName,
		"DISABLE_LEADER_ELECTION=true", "LOG_LEVEL=info",
		"METRICS_PORT="+strconv.Itoa(metrics), "HEALTH_PROBE_PORT="+strconv.Itoa(health),
	)
	// The last value of a variable is the one the process sees.
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting Karpenter: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logFile.Close() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			return nil, fmt.Errorf("Karpenter exited (%v): see %s", err, logPath)
		default:
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", health))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cmd, nil
			}
		}
		if time.Now().After(deadline) {
			stopProcess(cmd)
			return nil, fmt.Errorf("Karpenter not ready after 2m: see %s", logPath)
		}
		time.Sleep(time.Second)
	}
}

// stopProcess asks a process to stop and kills it after 30 s.
func stopProcess(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for i := 0; i < 30; i++ {
		if cmd.Process.Signal(syscall.Signal(0)) != nil {
			return
		}
		time.Sleep(time.Second)
	}
	_ = cmd.Process.Kill()
}

// awsAPIError is the SDK's wording of an error AWS (here awssim) answered.
var awsAPIError = regexp.MustCompile(`operation error [A-Za-z0-9 ]+: \w+, https response error StatusCode: \d+`)

// controllerErrors reads a controller's JSON log and returns its distinct
// errors, most frequent first.
func controllerErrors(path string) ([]logError, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	seen := map[[2]string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e struct {
			Level   string `json:"level"`
			Message string `json:"message"`
			Msg     string `json:"msg"`
			Error   string `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || !strings.EqualFold(e.Level, "error") {
			continue
		}
		msg := e.Message
		if msg == "" {
			msg = e.Msg
		}
		seen[[2]string{msg, normalizeError(e.Error)}]++
	}
	var out []logError
	for k, n := range seen {
		out = append(out, logError{Message: k[0], Error: k[1], Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Message+out[i].Error < out[j].Message+out[j].Error
	})
	return out, sc.Err()
}

// volatile are the parts of an error that differ between occurrences of
// the same one: request IDs, resource IDs, NodeClaim and node names.
var volatile = regexp.MustCompile(`RequestID: [0-9a-f-]+|\b(i|lt|fleet|sg|subnet|ami|vpc)-[0-9a-f]{8,}\b|\bmix-[a-z0-9]{5}\b|\bip-[0-9-]+\.[a-z0-9.-]+`)

func normalizeError(s string) string { return volatile.ReplaceAllString(s, "…") }

// formatCounts lists keys by count, most first, at most n of them.
func formatCounts(count map[string]int, n int, sep string) string {
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return count[keys[i]] > count[keys[j]] || (count[keys[i]] == count[keys[j]] && keys[i] < keys[j])
	})
	var parts []string
	for i, k := range keys {
		if i == n {
			parts = append(parts, fmt.Sprintf("(%d more)", len(keys)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s%s%d", k, sep, count[k]))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// compareTable renders both sides as one Markdown table and the list of
// the errors each controller logged.
func compareTable(version string, outPods, inPods int32, k, j side) string {
	dur := func(d time.Duration) string { return d.Round(100 * time.Millisecond).String() }
	calls := func(c map[string]int) string {
		total := 0
		for _, n := range c {
			total += n
		}
		return fmt.Sprintf("%d: %s", total, formatCounts(c, 8, " "))
	}
	// Calls per node: the measure beside the totals, as a plan of
	// more, smaller nodes makes more calls in all.
	perNode := func(c map[string]int, nodes int) string {
		if nodes <= 0 {
			return "-"
		}
		total := 0
		for _, n := range c {
			total += n
		}
		return fmt.Sprintf("%.2f (%d nodes)", float64(total)/float64(nodes), nodes)
	}
	errs := func(s side) string {
		n := 0
		for _, e := range s.Errors {
			n += e.Count
		}
		return fmt.Sprintf("%d (%d distinct; %d from an awssim answer)", n, len(s.Errors), len(s.FidelityRegressions))
	}
	rows := [][3]string{
		{fmt.Sprintf("scale-out: time to all %d pods Running", outPods), dur(k.Out.Wall), dur(j.Out.Wall)},
		{"scale-out: nodes", strconv.Itoa(k.Out.Nodes), strconv.Itoa(j.Out.Nodes)},
		{"scale-out: instance types (type capacity-type × nodes)", k.OutTypes, j.OutTypes},
		{"scale-out: $/h", fmt.Sprintf("%.3f", k.Out.Cost), fmt.Sprintf("%.3f", j.Out.Cost)},
		{"scale-out: controller RSS peak / p95 (MiB), CPU (cores)", rssCPU(k.Out), rssCPU(j.Out)},
		{"scale-out: AWS calls by the controller", calls(k.Out.Calls), calls(j.Out.Calls)},
		{"scale-out: AWS calls per node launched", perNode(k.Out.Calls, k.Out.Nodes), perNode(j.Out.Calls, j.Out.Nodes)},
		{fmt.Sprintf("scale-in to %d pods: consolidation time (to the last NodeClaim change)", inPods), dur(k.Consolidation), dur(j.Consolidation)},
		{"scale-in: nodes after", strconv.Itoa(k.In.Nodes), strconv.Itoa(j.In.Nodes)},
		{"scale-in: instance types after", k.InTypes, j.InTypes},
		{"scale-in: $/h after", fmt.Sprintf("%.3f", k.In.Cost), fmt.Sprintf("%.3f", j.In.Cost)},
		{"scale-in: controller RSS peak / p95 (MiB), CPU (cores)", rssCPU(k.In), rssCPU(j.In)},
		{"scale-in: AWS calls by the controller", calls(k.In.Calls), calls(j.In.Calls)},
		{"scale-in: AWS calls per node removed", perNode(k.In.Calls, k.Out.Nodes-k.In.Nodes), perNode(j.In.Calls, j.Out.Nodes-j.In.Nodes)},
		{"leaked instances after the pool is deleted", strconv.Itoa(k.Leaked), strconv.Itoa(j.Leaked)},
		{"errors the controller logged", errs(k), errs(j)},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| | Karpenter %s | Joist |\n|---|---|---|\n", version)
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	for _, s := range []side{k, j} {
		fmt.Fprintf(&b, "\nErrors %s logged:\n", s.Name)
		if len(s.Errors) == 0 {
			b.WriteString("- none\n")
		}
		for _, e := range s.Errors {
			reason := knownErrorReason(e)
			if reason == "" {
				reason = "not yet explained"
			}
			fmt.Fprintf(&b, "- %d× %s: `%s` (%s)\n", e.Count, e.Message, truncate(e.Error, 300), reason)
		}
	}
	return b.String()
}

func rssCPU(r row) string { return fmt.Sprintf("%.0f / %.0f, %.2f", r.PeakRSS, r.P95RSS, r.CPU) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// knownErrors explain errors a controller logs in the sandbox for reasons
// other than an awssim answer: substrings of the message or error, and why.
var knownErrors = []struct{ match, reason string }{
	{`NodePool.karpenter.sh "mix" not found`, "the teardown deletes the NodePool while its NodeClaims still terminate; Karpenter's state controller logs each until they are gone"},
	{"the object has been modified", "an update conflict on an object kwok or the kubelet stand-in writes too; the reconciler retries it"},
}

func knownErrorReason(e logError) string {
	for _, k := range knownErrors {
		if strings.Contains(e.Message, k.match) || strings.Contains(e.Error, k.match) {
			return k.reason
		}
	}
	if awsAPIError.MatchString(e.Error) || awsAPIError.MatchString(e.Message) {
		return "an AWS API error from awssim: a fidelity regression"
	}
	return ""
}

// Markers of the comparison's section in docs/performance.md; `make scale`
// keeps the section when it rewrites the rest.
const (
	compareBegin = "<!-- make compare: begin -->"
	compareEnd   = "<!-- make compare: end -->"
)

// writeCompareSection puts the comparison into docs/performance.md, in place
// of the previous one.
func writeCompareSection(table string) error {
	path, err := filepath.Abs(filepath.Join("..", "..", "docs", "performance.md"))
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	section := fmt.Sprintf(`%s
## Beside upstream Karpenter

Generated by `+"`make compare`"+` on %s. The same scale-out and scale-in as `+"`make scale`"+`, first on
upstream Karpenter's AWS controller (built from the release by hack/compare, run as a local process
against the sandbox with its own CRDs, node role, interruption queue and rules as its
getting-started guide creates them), then on Joist (its queue and rules as joist_interruption_queue
creates them), each in a fresh sandbox with awssim. RSS and
CPU are the controller process's own; AWS calls are the controller's alone, counted by awssim.
$/h is the nodes' catalog instance prices plus their EBS volumes, on both sides.

%s%s
`, compareBegin, time.Now().UTC().Format("2006-01-02"), table, compareEnd)
	return os.WriteFile(path, []byte(replaceCompareSection(string(doc), section)), 0o644)
}

// replaceCompareSection returns doc with its comparison section replaced by
// section, or section appended.
func replaceCompareSection(doc, section string) string {
	i, j := strings.Index(doc, compareBegin), strings.Index(doc, compareEnd)
	if i >= 0 && j > i {
		return doc[:i] + strings.TrimSuffix(section, "\n") + doc[j+len(compareEnd):]
	}
	return strings.TrimRight(doc, "\n") + "\n\n" + section
}

// compareSection is the comparison section of docs/performance.md, if any.
func compareSection(doc string) string {
	i, j := strings.Index(doc, compareBegin), strings.Index(doc, compareEnd)
	if i < 0 || j < i {
		return ""
	}
	return doc[i : j+len(compareEnd)]
}
