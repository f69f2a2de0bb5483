package scale

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// migrationHold is how long each direction watches the fleet after the
// switch for churn: longer than the default pool's consolidateAfter (30 s)
// and the controllers' first disruption passes.
const migrationHold = 3 * time.Minute

// migrationWorkloads run under Karpenter, then scale up after the move to
// Joist and again after the move back (replicas per phase). One CPU a pod;
// the spread ones keep one pod a node, so the fleet has several nodes of
// both pools, none of which consolidation could empty.
var migrationWorkloads = []migrationWorkload{
	{name: "inflate", pool: "default", replicas: [3]int32{12, 18, 24}},
	{name: "spread", pool: "default", spread: true, replicas: [3]int32{4, 6, 8}},
	{name: "batch", pool: "batch", spread: true, replicas: [3]int32{2, 3, 4}},
}

type migrationWorkload struct {
	name, pool string
	spread     bool
	replicas   [3]int32
}

// churn is what a watch saw happen to the NodeClaims and instances that
// existed when it started.
type churn struct {
	Claims, Instances                    int
	Deleted, Drifted, Disrupted, Stopped []string
	NewClaims                            int
	PlanExit                             int
	Apply                                string
}

func (c churn) clean() bool {
	return len(c.Deleted)+len(c.Drifted)+len(c.Disrupted)+len(c.Stopped) == 0
}

// TestMigration moves a running fleet from upstream Karpenter to Joist with
// examples/migrate-from-karpenter-helm (adapted to the sandbox: no Helm or
// kubectl provider state to forget), and back. Each way, from the moment
// the old controller stops, no NodeClaim of the fleet may be deleted,
// drifted or disrupted and no instance stopped, while new pods get nodes
// from the new controller; the Joist apply must import the objects without
// changing them, and the plan after it must be empty.
// `make migration` runs it and writes the result table into the migration
// guide. It needs JOIST_COMPARE_KARPENTER and JOIST_COMPARE_CRDS as
// `make compare` sets them.
func TestMigration(t *testing.T) {
	bin, crdDir := os.Getenv("JOIST_COMPARE_KARPENTER"), os.Getenv("JOIST_COMPARE_CRDS")
	if bin == "" || crdDir == "" {
		t.Skip("`make migration` runs this: JOIST_COMPARE_KARPENTER and JOIST_COMPARE_CRDS name upstream Karpenter's controller and CRDs")
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatal("the terraform CLI is not on PATH")
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	binDir, err := sandbox.FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.Start(ctx, sandbox.Options{
		BinDir: binDir, Dir: os.Getenv("JOIST_SCALE_DIR"), Progress: progressWriter(), RunControllers: true, SystemNodes: 2,
		NodeLeaseSeconds: nodeLeaseSeconds,
		AWS:              &awssim.Options{ClusterName: clusterName, DefaultPoolCapacity: 100000},
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &world{sb: sb, cs: kubernetes.NewForConfigOrDie(sb.Config)}
	defer w.stop()
	scheme, err := operator.Scheme()
	if err != nil {
		t.Fatal(err)
	}
	if w.kube, err = client.New(sb.Config, client.Options{Scheme: scheme}); err != nil {
		t.Fatal(err)
	}
	step := func(format string, args ...any) {
		fmt.Printf("migration: %s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	// Karpenter, installed as its getting-started guide does, runs a workload.
	step("Karpenter %s: CRDs, node role, queue, EC2NodeClass and NodePools as the migration example describes them", os.Getenv("JOIST_COMPARE_VERSION"))
	if err := installCRDs(ctx, sb, crdDir); err != nil {
		t.Fatal(err)
	}
	if err := gettingStarted(ctx, sb); err != nil {
		t.Fatal(err)
	}
	objs, err := migrationObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if err := w.kube.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	logPath := filepath.Join(sb.Dir, "logs", "karpenter.log")
	karpenter, err := startKarpenter(ctx, sb, bin, logPath, karpenterLeaderElection...)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { stopProcess(karpenter) }()
	ns := "migration"
	if _, err := w.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, wl := range migrationWorkloads {
		if _, err := w.cs.AppsV1().Deployments(ns).Create(ctx, wl.deployment(ns), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	w.waitWorkloads(ctx, t, ns, 0)
	step("Karpenter runs %d pods on %d NodeClaims", podsIn(0), len(w.claimNames(ctx, t)))

	// helm uninstall: the controller's pod gets SIGTERM; CRDs and objects stay.
	stopProcess(karpenter)
	karpenter = nil
	step("Karpenter stopped; terraform apply of the migration example")
	toJoist := w.watchChurn(ctx, t)
	tf, err := newMigrationTerraform(sb, filepath.Join(sb.Dir, "migration"))
	if err != nil {
		t.Fatal(err)
	}
	if err := tf.run(ctx, "apply"); err != nil {
		t.Fatal(err)
	}
	applied := tf.summary
	planExit, planOut, err := tf.plan(ctx)
	if err != nil {
		t.Fatal(err)
	}
	step("applied; plan after apply exits %d; scaling to %d pods", planExit, podsIn(1))
	w.scaleWorkloads(ctx, t, ns, 1)
	w.waitWorkloads(ctx, t, ns, 1)
	time.Sleep(migrationHold)
	there := toJoist.stop()
	there.PlanExit, there.Apply = planExit, applied
	step("Karpenter → Joist: %+v", there)

	// Back: the controller's force_destroy set, then the configuration
	// forgets the NodePools and EC2NodeClass and destroys the rest.
	step("terraform apply: force_destroy on joist_controller, then Joist removed")
	toKarpenter := w.watchChurn(ctx, t)
	if err := tf.rewrite("controller.tf", func(s string) string {
		return strings.Replace(s, "interruption_queue = joist_interruption_queue.this.name\n}",
			"interruption_queue = joist_interruption_queue.this.name\n  force_destroy      = true\n}", 1)
	}); err != nil {
		t.Fatal(err)
	}
	if err := tf.run(ctx, "apply"); err != nil {
		t.Fatal(err)
	}
	if err := tf.leave(); err != nil {
		t.Fatal(err)
	}
	if err := tf.run(ctx, "apply"); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool { return len(sb.Controllers()) == 0 }); err != nil {
		t.Fatal("the Joist controller still runs after its Deployment was destroyed")
	}
	step("Joist removed; Karpenter's CRDs applied again and Karpenter started; scaling to %d pods", podsIn(2))
	if err := installCRDs(ctx, sb, crdDir); err != nil {
		t.Fatal(err)
	}
	if karpenter, err = startKarpenter(ctx, sb, bin, filepath.Join(sb.Dir, "logs", "karpenter-back.log"), karpenterLeaderElection...); err != nil {
		t.Fatal(err)
	}
	w.scaleWorkloads(ctx, t, ns, 2)
	w.waitWorkloads(ctx, t, ns, 2)
	time.Sleep(migrationHold)
	back := toKarpenter.stop()
	back.PlanExit = -1
	step("Joist → Karpenter: %+v", back)

	table := migrationTable(os.Getenv("JOIST_COMPARE_VERSION"), there, back)
	fmt.Println(table)
	if err := writeMigrationSection(table); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		way string
		c   churn
	}{{"Karpenter → Joist", there}, {"Joist → Karpenter", back}} {
		if !r.c.clean() {
			t.Errorf("%s: NodeClaims deleted %v, drifted %v, disrupted %v; instances stopped %v", r.way, r.c.Deleted, r.c.Drifted, r.c.Disrupted, r.c.Stopped)
		}
		if r.c.NewClaims == 0 {
			t.Errorf("%s: the new pods got no new NodeClaim", r.way)
		}
	}
	if !strings.Contains(applied, " 0 changed") {
		t.Errorf("the migration apply changed the adopted objects (%s): the example no longer writes them as they are", applied)
	}
	if planExit != 0 {
		t.Errorf("terraform plan after the migration apply exited %d, want 0 (no changes):\n%s", planExit, planOut)
	}
}

// migrationManifests are the EC2NodeClass and NodePools as a Karpenter
// user wrote them (the YAML kubectl_manifest and kubectl apply sent), the
// way examples/migrate-from-karpenter-helm describes them, so that
// importing them changes nothing.
const migrationManifests = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: ` + karpenterNodeRole + `
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: ` + clusterName + `
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: ` + clusterName + `
  tags:
    karpenter.sh/discovery: ` + clusterName + `
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
        - key: karpenter.k8s.aws/instance-cpu
          operator: In
          values: ["4", "8", "16", "32"]
        - key: karpenter.k8s.aws/instance-hypervisor
          operator: In
          values: ["nitro"]
        - key: karpenter.k8s.aws/instance-generation
          operator: Gt
          values: ["5"]
  limits:
    cpu: 1000
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 30s
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch
spec:
  template:
    metadata:
      labels:
        workload: batch
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m"]
      taints:
        - key: workload
          value: batch
          effect: NoSchedule
      expireAfter: 168h
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 5m
    budgets:
      - nodes: "20%"
      - nodes: "0"
        schedule: "0 8 * * 1-5"
        duration: 10h
`

// migrationObjects decodes migrationManifests.
func migrationObjects() ([]client.Object, error) {
	var objs []client.Object
	for _, doc := range strings.Split(migrationManifests, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		objs = append(objs, u)
	}
	return objs, nil
}

// karpenterLeaderElection is Karpenter's leader election as its chart runs
// it: a Lease in its namespace, released when the pod stops.
var karpenterLeaderElection = []string{"DISABLE_LEADER_ELECTION=false", "LEADER_ELECTION_NAMESPACE=kube-system"}

func podsIn(phase int) int32 {
	var n int32
	for _, wl := range migrationWorkloads {
		n += wl.replicas[phase]
	}
	return n
}

func (wl migrationWorkload) deployment(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": wl.name}
	replicas := wl.replicas[0]
	spec := corev1.PodSpec{
		NodeSelector: map[string]string{v1.NodePoolLabelKey: wl.pool},
		Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.9",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
	}
	if wl.pool == "batch" {
		spec.Tolerations = []corev1.Toleration{{Key: "workload", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	}
	if wl.spread {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname,
			}},
		}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: wl.name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

func (w *world) scaleWorkloads(ctx context.Context, t *testing.T, ns string, phase int) {
	t.Helper()
	for _, wl := range migrationWorkloads {
		s, err := w.cs.AppsV1().Deployments(ns).GetScale(ctx, wl.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec.Replicas = wl.replicas[phase]
		if _, err := w.cs.AppsV1().Deployments(ns).UpdateScale(ctx, wl.name, s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// waitWorkloads waits until every workload has its phase's replicas Running.
func (w *world) waitWorkloads(ctx context.Context, t *testing.T, ns string, phase int) {
	t.Helper()
	const timeout = 10 * time.Minute
	var short string
	err := waitFor(ctx, timeout, func() bool {
		short = ""
		for _, wl := range migrationWorkloads {
			pods, err := w.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + wl.name})
			if err != nil {
				return false
			}
			var running int32
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
					running++
				}
			}
			if running < wl.replicas[phase] {
				short += fmt.Sprintf(" %s %d of %d;", wl.name, running, wl.replicas[phase])
			}
		}
		return short == ""
	})
	if err != nil {
		t.Fatalf("pods Running after %s:%s", timeout, short)
	}
}

func waitFor(ctx context.Context, timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	return nil
}

func (w *world) claimNames(ctx context.Context, t *testing.T) []string {
	t.Helper()
	var claims v1.NodeClaimList
	if err := w.kube.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range claims.Items {
		names = append(names, c.Name)
	}
	return names
}

// churnWatch polls the NodeClaims and instances that existed when it
// started until stop.
type churnWatch struct {
	mu     sync.Mutex
	result churn
	seen   map[string]bool
	done   chan struct{}
	wg     sync.WaitGroup
}

func (w *world) watchChurn(ctx context.Context, t *testing.T) *churnWatch {
	t.Helper()
	var claims v1.NodeClaimList
	if err := w.kube.List(ctx, &claims); err != nil {
		t.Fatal(err)
	}
	base := map[string]string{} // claim name → provider ID
	for _, c := range claims.Items {
		base[c.Name] = c.Status.ProviderID
	}
	instances := map[string]bool{}
	for _, id := range base {
		if i := strings.LastIndex(id, "/"); i >= 0 {
			instances[id[i+1:]] = true
		}
	}
	cw := &churnWatch{seen: map[string]bool{}, done: make(chan struct{})}
	cw.result.Claims, cw.result.Instances = len(base), len(instances)
	api := ec2.NewFromConfig(w.sb.AWS.AWSConfig())
	poll := func() {
		var now v1.NodeClaimList
		if err := w.kube.List(ctx, &now); err != nil {
			return
		}
		present := map[string]v1.NodeClaim{}
		for _, c := range now.Items {
			present[c.Name] = c
			if _, ok := base[c.Name]; !ok {
				cw.mark("new", c.Name)
			}
		}
		for name := range base {
			c, ok := present[name]
			switch {
			case !ok || c.DeletionTimestamp != nil:
				cw.mark("deleted", name)
			case meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDrifted):
				cw.mark("drifted", name)
			case meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDisruptionReason):
				cw.mark("disrupted", name)
			}
			if ok && c.Status.NodeName != "" {
				var node corev1.Node
				if w.kube.Get(ctx, client.ObjectKey{Name: c.Status.NodeName}, &node) == nil {
					for _, taint := range node.Spec.Taints {
						if taint.Key == v1.DisruptedTaintKey {
							cw.mark("disrupted", name)
						}
					}
				}
			}
		}
		if len(instances) == 0 {
			return
		}
		ids := make([]string, 0, len(instances))
		for id := range instances {
			ids = append(ids, id)
		}
		out, err := api.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: ids})
		if err != nil {
			return
		}
		for _, r := range out.Reservations {
			for _, i := range r.Instances {
				if i.State != nil && i.State.Name != ec2types.InstanceStateNameRunning {
					cw.mark("stopped", aws.ToString(i.InstanceId))
				}
			}
		}
	}
	cw.wg.Add(1)
	go func() {
		defer cw.wg.Done()
		for {
			poll()
			select {
			case <-cw.done:
				poll()
				return
			case <-time.After(3 * time.Second):
			}
		}
	}()
	return cw
}

func (cw *churnWatch) mark(what, name string) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	key := what + "/" + name
	if cw.seen[key] {
		return
	}
	cw.seen[key] = true
	r := &cw.result
	switch what {
	case "new":
		r.NewClaims++
	case "deleted":
		r.Deleted = append(r.Deleted, name)
	case "drifted":
		r.Drifted = append(r.Drifted, name)
	case "disrupted":
		r.Disrupted = append(r.Disrupted, name)
	case "stopped":
		r.Stopped = append(r.Stopped, name)
	}
}

func (cw *churnWatch) stop() churn {
	close(cw.done)
	cw.wg.Wait()
	cw.mu.Lock()
	defer cw.mu.Unlock()
	for _, l := range [][]string{cw.result.Deleted, cw.result.Drifted, cw.result.Disrupted, cw.result.Stopped} {
		sort.Strings(l)
	}
	return cw.result
}

// migrationTerraform runs the terraform CLI on a copy of
// examples/migrate-from-karpenter-helm with the locally built provider.
type migrationTerraform struct {
	dir  string
	env  []string
	vars []string
	// summary is the last apply's closing line, "Resources: ...".
	summary string
}

// newMigrationTerraform copies the example into dir for the sandbox: the
// sandbox's Karpenter was not installed by Terraform, so there is no Helm
// release or kubectl_manifest state for the removed blocks to forget, and
// the helm and kubectl providers (not installable offline) go with them.
func newMigrationTerraform(sb *sandbox.Sandbox, dir string) (*migrationTerraform, error) {
	src := filepath.Join("..", "..", "examples", "migrate-from-karpenter-helm")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(src, "*.tf"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no Terraform files in %s: %v", src, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		s := string(b)
		switch filepath.Base(f) {
		case "adopt.tf":
			s = removeBlocks(s, "removed {")
		case "providers.tf":
			s = removeBlocks(removeBlocks(s, `provider "helm" {`), `provider "kubectl" {`)
		case "versions.tf":
			s = removeBlocks(removeBlocks(s, "helm = {"), "kubectl = {")
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(s), 0o644); err != nil {
			return nil, err
		}
	}
	binDir, err := filepath.Abs(sb.BinDir)
	if err != nil {
		return nil, err
	}
	rc := filepath.Join(dir, "dev.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", "joistdev/joist", binDir)), 0o644); err != nil {
		return nil, err
	}
	tf := &migrationTerraform{dir: dir, env: os.Environ()}
	for k, v := range sb.Env() {
		tf.env = append(tf.env, k+"="+v)
	}
	tf.env = append(tf.env, "TF_CLI_CONFIG_FILE="+rc, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"), "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	role, err := iam.NewFromConfig(sb.AWS.AWSConfig()).GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(karpenterNodeRole)})
	if err != nil {
		return nil, err
	}
	tf.vars = []string{"-var", "cluster_name=" + clusterName, "-var", "kubeconfig_path=" + sb.Kubeconfig, "-var", "node_role_arn=" + aws.ToString(role.Role.Arn)}
	return tf, nil
}

// removeBlocks drops every block that starts with a line beginning with
// opener (after indentation), through its closing brace, with the comment
// lines right above it.
func removeBlocks(s, opener string) string {
	lines := strings.Split(s, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), opener) {
			out = append(out, lines[i])
			continue
		}
		for len(out) > 0 && strings.HasPrefix(strings.TrimSpace(out[len(out)-1]), "#") {
			out = out[:len(out)-1]
		}
		depth := 0
		for ; i < len(lines); i++ {
			depth += strings.Count(lines[i], "{") - strings.Count(lines[i], "}")
			if depth == 0 {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func (tf *migrationTerraform) rewrite(name string, edit func(string) string) error {
	path := filepath.Join(tf.dir, name)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	after := edit(string(b))
	if after == string(b) {
		return fmt.Errorf("%s: the edit changed nothing", name)
	}
	return os.WriteFile(path, []byte(after), 0o644)
}

// leave is the configuration of a user moving back: the EC2NodeClass and
// NodePools forgotten (kept in the cluster), the controller, its role and
// its queue destroyed.
func (tf *migrationTerraform) leave() error {
	for _, name := range []string{"adopt.tf", "main.tf", "controller.tf"} {
		if err := os.Remove(filepath.Join(tf.dir, name)); err != nil {
			return err
		}
	}
	var b strings.Builder
	for _, r := range []string{"joist_ec2_node_class.default", "joist_node_pool.default", "joist_node_pool.batch"} {
		fmt.Fprintf(&b, "removed {\n  from = %s\n\n  lifecycle {\n    destroy = false\n  }\n}\n\n", r)
	}
	return os.WriteFile(filepath.Join(tf.dir, "leave.tf"), []byte(b.String()), 0o644)
}

func (tf *migrationTerraform) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "terraform", append(append([]string{"-chdir=" + tf.dir}, args...), tf.vars...)...)
	cmd.Env = tf.env
	return cmd
}

func (tf *migrationTerraform) run(ctx context.Context, command string) error {
	out, err := tf.command(ctx, command, "-auto-approve", "-input=false", "-no-color").CombinedOutput()
	_ = os.WriteFile(filepath.Join(tf.dir, "terraform-"+command+".log"), out, 0o644)
	if err != nil {
		return fmt.Errorf("terraform %s: %v\n%s", command, err, out)
	}
	if m := applySummary.FindSubmatch(out); m != nil {
		tf.summary = string(m[1])
	}
	return nil
}

var applySummary = regexp.MustCompile(`Apply complete! Resources: ([^.\n]*)`)

// plan runs `terraform plan -detailed-exitcode`: 0 when nothing would change.
func (tf *migrationTerraform) plan(ctx context.Context) (int, string, error) {
	out, err := tf.command(ctx, "plan", "-detailed-exitcode", "-input=false", "-no-color").CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out), nil
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return 2, string(out), nil
	}
	return 0, string(out), fmt.Errorf("terraform plan: %v\n%s", err, out)
}

func migrationTable(version string, there, back churn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Direction | NodeClaims / instances at the switch | deleted | drifted | disrupted | instances stopped | new NodeClaims for new pods | terraform apply | plan after apply |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|\n")
	row := func(way string, c churn, plan string) {
		apply := c.Apply
		if apply == "" {
			apply = "n/a"
		}
		fmt.Fprintf(&b, "| %s | %d / %d | %d | %d | %d | %d | %d | %s | %s |\n", way, c.Claims, c.Instances,
			len(c.Deleted), len(c.Drifted), len(c.Disrupted), len(c.Stopped), c.NewClaims, apply, plan)
	}
	plan := "empty"
	if there.PlanExit != 0 {
		plan = "not empty"
	}
	row("Karpenter "+version+" → Joist", there, plan)
	row("Joist → Karpenter "+version, back, "n/a (Terraform no longer manages the objects)")
	return b.String()
}

const (
	migrationBegin = "<!-- migration: generated by `make migration` -->"
	migrationEnd   = "<!-- end migration -->"
)

var migrationSection = regexp.MustCompile(`(?s)` + regexp.QuoteMeta(migrationBegin) + `.*?` + regexp.QuoteMeta(migrationEnd))

// writeMigrationSection puts the table into the migration guide's template
// and its generated page, in place of the previous one.
func writeMigrationSection(table string) error {
	section := fmt.Sprintf("%s\nGenerated by `make migration` on %s: each way, the fleet is watched from the moment the old "+
		"controller stops until %s after the new one placed new pods.\n\n%s%s", migrationBegin, time.Now().UTC().Format("2006-01-02"),
		migrationHold, table, migrationEnd)
	for _, rel := range []string{"templates/guides/migrating-from-karpenter.md.tmpl", "docs/guides/migrating-from-karpenter.md"} {
		path := filepath.Join("..", "..", rel)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !migrationSection.Match(b) {
			return fmt.Errorf("%s has no %q section", rel, migrationBegin)
		}
		if err := os.WriteFile(path, migrationSection.ReplaceAllLiteral(b, []byte(section)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
