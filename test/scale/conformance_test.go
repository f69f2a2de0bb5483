package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
	"github.com/joistdev/terraform-provider-joist/test/e2e"
)

// conformanceConfig is what `make conformance` (hack/conformance/run.sh)
// passes in the environment.
type conformanceConfig struct {
	suitesDir  string   // the suite binaries hack/conformance/build.sh compiles
	reportsDir string   // <side>/<suite>.json and .log
	suites     []string // suite names, in run order
	sides      []string // "karpenter", "joist"
	karpenter  string   // upstream Karpenter's controller binary
	crdDir     string   // the release's CRDs
	extraCRDs  []string // CRDs the suites' cleanup lists that neither controller ships
	provider   string   // the provider release's source: the suites' testdata, the core suites' defaults
	core       string   // the core release's source: the core suites' testdata
	version    string
	// suiteTimeout bounds each suite (ginkgo's --ginkgo.timeout); wait the
	// default Eventually timeout the suites use (the build makes it
	// settable); focus and skip are ginkgo regular expressions.
	suiteTimeout time.Duration
	wait         string
	focus, skip  string
}

func conformanceConfigFromEnv(t *testing.T) conformanceConfig {
	c := conformanceConfig{
		suitesDir:  os.Getenv("JOIST_CONFORMANCE_SUITES"),
		reportsDir: os.Getenv("JOIST_CONFORMANCE_REPORTS"),
		suites:     strings.Fields(os.Getenv("JOIST_CONFORMANCE_RUN")),
		sides:      strings.Fields(envOr("JOIST_CONFORMANCE_SIDES", "karpenter joist")),
		karpenter:  os.Getenv("JOIST_COMPARE_KARPENTER"),
		crdDir:     os.Getenv("JOIST_COMPARE_CRDS"),
		extraCRDs:  strings.Fields(os.Getenv("JOIST_CONFORMANCE_EXTRA_CRDS")),
		provider:   os.Getenv("JOIST_CONFORMANCE_PROVIDER"),
		core:       os.Getenv("JOIST_CONFORMANCE_CORE"),
		version:    os.Getenv("JOIST_COMPARE_VERSION"),
		wait:       envOr("JOIST_CONFORMANCE_WAIT", "3m"),
		focus:      os.Getenv("JOIST_CONFORMANCE_FOCUS"),
		skip:       os.Getenv("JOIST_CONFORMANCE_SKIP"),
	}
	var err error
	if c.suiteTimeout, err = time.ParseDuration(envOr("JOIST_CONFORMANCE_SUITE_TIMEOUT", "30m")); err != nil {
		t.Fatalf("JOIST_CONFORMANCE_SUITE_TIMEOUT: %v", err)
	}
	if c.reportsDir == "" {
		c.reportsDir = filepath.Join(c.suitesDir, "reports")
	}
	if len(c.suites) == 0 {
		bins, _ := filepath.Glob(filepath.Join(c.suitesDir, "*.test"))
		for _, b := range bins {
			c.suites = append(c.suites, strings.TrimSuffix(filepath.Base(b), ".test"))
		}
	}
	return c
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// TestConformance runs Karpenter's own end-to-end suites (compiled by
// hack/conformance/build.sh) in the sandbox: first against upstream
// Karpenter, the control, set up as in `make compare`; then against Joist,
// deployed as joist_controller deploys it. Each suite binary writes a ginkgo
// JSON report per side; the table of both goes into the Karpenter
// compatibility guide's template. Reports already in the reports directory
// for a side not run (JOIST_CONFORMANCE_SIDES) are read as they are, so one
// side can be rerun alone, or the sides run in two processes at once and
// JOIST_CONFORMANCE_SIDES=none write the table from both.
func TestConformance(t *testing.T) {
	c := conformanceConfigFromEnv(t)
	if c.suitesDir == "" {
		t.Skip("`make conformance` runs this: JOIST_CONFORMANCE_SUITES names the suite binaries hack/conformance/build.sh compiles")
	}
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, side := range c.sides {
		start := time.Now()
		switch side {
		case "karpenter":
			conformanceKarpenter(ctx, t, c)
		case "joist":
			conformanceJoist(ctx, t, c)
		case "none": // only the table, from the reports there are
		default:
			t.Fatalf("JOIST_CONFORMANCE_SIDES: unknown side %q", side)
		}
		fmt.Printf("conformance: %s: %d suite(s) in %s\n", side, len(c.suites), time.Since(start).Round(time.Second))
	}
	karpenter, err := readSuiteReports(filepath.Join(c.reportsDir, "karpenter"))
	if err != nil {
		t.Fatal(err)
	}
	joist, err := readSuiteReports(filepath.Join(c.reportsDir, "joist"))
	if err != nil {
		t.Fatal(err)
	}
	table := conformanceTable(c.version, karpenter, joist)
	fmt.Println(table)
	if err := writeConformanceTable(table); err != nil {
		t.Fatal(err)
	}
}

// conformanceKarpenter runs the suites against upstream Karpenter.
func conformanceKarpenter(ctx context.Context, t *testing.T, c conformanceConfig) {
	if c.karpenter == "" {
		t.Fatal("JOIST_COMPARE_KARPENTER is not set: hack/conformance/run.sh sets it")
	}
	var env []string
	for k, v := range e2eSettings(false) {
		env = append(env, k+"="+v)
	}
	w, proc, _, err := startKarpenterWorld(ctx, c.karpenter, c.crdDir, "karpenter", env...)
	if w != nil {
		defer w.stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer stopProcess(proc)
	runSuites(ctx, t, c, w.sb, "karpenter")
}

// conformanceJoist runs the suites against Joist. Its node role is the one
// the suites' default EC2NodeClass names.
func conformanceJoist(ctx context.Context, t *testing.T, c conformanceConfig) {
	// The suites' kube-system/karpenter-leader-election Lease belongs to
	// the settings Deployment (see keepSettingsLease); Joist elects its
	// leader under another name here.
	settings := e2eSettings(true)
	settings["LEADER_ELECTION_NAME"] = "joist-leader-election"
	w, err := startWorld(ctx, progressWriter(), true, settings)
	if w != nil {
		defer w.stop()
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := createNodeRole(ctx, w.sb, karpenterNodeRole); err != nil {
		t.Fatal(err)
	}
	runSuites(ctx, t, c, w.sb, "joist")
}

// e2eFeatureGates and e2eAWSFeatureGates are the gates Karpenter's e2e
// install turns on (the release's test/hack/e2e_scripts/install_karpenter.sh),
// but the DRA ones: the sandbox has no dynamic resource allocation.
var (
	e2eFeatureGates    = []string{"SpotToSpotConsolidation", "NodeRepair", "ReservedCapacity", "NodeOverlay", "StaticCapacity", "CapacityBuffer", "TerminateFirstDrift", "TerminateFirstRepair"}
	e2eAWSFeatureGates = []string{"NodeClassCEL", "RebootForRepair"}
)

// e2eSettings are the controller settings the suites expect; for Joist
// without the gates it refuses to turn on (settings.Gates says why).
func e2eSettings(joist bool) map[string]string {
	on := func(names []string, gates []settings.Gate) string {
		var out []string
		for _, n := range names {
			if joist && slices.ContainsFunc(gates, func(g settings.Gate) bool { return g.Name == n && g.Unsupported != "" }) {
				continue
			}
			out = append(out, n+"=true")
		}
		return strings.Join(out, ",")
	}
	env := map[string]string{"FEATURE_GATES": on(e2eFeatureGates, settings.Gates)}
	if g := on(e2eAWSFeatureGates, settings.AWSGates); g != "" {
		env["AWS_FEATURE_GATES"] = g
	}
	return env
}

// runSuites prepares the cluster for the suites and runs each in turn.
func runSuites(ctx context.Context, t *testing.T, c conformanceConfig, sb *sandbox.Sandbox, side string) {
	if err := installCRDFiles(ctx, sb, c.extraCRDs); err != nil {
		t.Fatal(err)
	}
	env := suiteEnv(sb)
	if err := createSettingsDeployment(ctx, sb, env); err != nil {
		t.Fatal(err)
	}
	leaseCtx, stopLease := context.WithCancel(ctx)
	defer stopLease()
	go keepSettingsLease(leaseCtx, kubernetes.NewForConfigOrDie(sb.Config))
	dir := filepath.Join(c.reportsDir, side)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range c.suites {
		start := time.Now()
		err := runSuite(ctx, c, env, s, dir)
		fmt.Printf("conformance: %s: suite %s done in %s (%v)\n", side, s, time.Since(start).Round(time.Second), err)
		if err := cleanAfterSuite(ctx, sb); err != nil {
			fmt.Printf("conformance: %s: cleaning up after suite %s: %v\n", side, s, err)
		}
	}
}

// suiteEnv is what the suites' environment reads: the kubeconfig, the AWS
// endpoint and credentials, and the cluster's name, endpoint and queue.
func suiteEnv(sb *sandbox.Sandbox) map[string]string {
	env := sb.Env()
	env["CLUSTER_NAME"] = clusterName
	env["CLUSTER_ENDPOINT"] = sb.Config.Host
	env["INTERRUPTION_QUEUE"] = clusterName
	return env
}

// runSuite runs one suite binary with a JSON report and its output beside it.
func runSuite(ctx context.Context, c conformanceConfig, env map[string]string, suite, dir string) error {
	args := []string{
		"-test.v", "-test.timeout", (c.suiteTimeout + 5*time.Minute).String(),
		"--ginkgo.json-report", filepath.Join(dir, suite+".json"),
		"--ginkgo.timeout", c.suiteTimeout.String(),
		// Time for the cleanup of a spec the suite timeout interrupts.
		"--ginkgo.grace-period", "2m",
		// One spec order on both sides, so a suite the time limit cuts
		// short reaches the same specs on each.
		"--ginkgo.seed", "1",
		"--ginkgo.no-color",
	}
	if c.focus != "" {
		args = append(args, "--ginkgo.focus", c.focus)
	}
	if c.skip != "" {
		args = append(args, "--ginkgo.skip", c.skip)
	}
	if strings.HasPrefix(suite, "core-") {
		core, err := coreSuiteArgs(c, env, dir)
		if err != nil {
			return err
		}
		args = append(args, core...)
	}
	out, err := os.Create(filepath.Join(dir, suite+".log"))
	if err != nil {
		return err
	}
	defer out.Close()
	work, err := suiteWorkDir(c, suite, dir)
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(c.suitesDir, suite+".test"), args...)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "CONFORMANCE_EVENTUALLY_TIMEOUT=" + c.wait}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// suiteWorkDir is the directory a suite runs in, as go test runs it in its
// package's: with a copy of the package's testdata, which some specs read.
func suiteWorkDir(c conformanceConfig, suite, dir string) (string, error) {
	src := filepath.Join(c.provider, "test", "suites", suite, "testdata")
	if name, ok := strings.CutPrefix(suite, "core-"); ok {
		src = filepath.Join(c.core, "test", "suites", name, "testdata")
	}
	work := filepath.Join(dir, suite+".work")
	if err := os.RemoveAll(work); err != nil {
		return "", err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(src); err != nil {
		return work, nil
	}
	return work, os.CopyFS(filepath.Join(work, "testdata"), os.DirFS(src))
}

// coreSuiteArgs are the flags with which the provider's release runs the
// core suites (its Makefile's upstream-e2etests): its EC2NodeClass for the
// cluster and its NodePool as the defaults, and the node conditions its
// repair policies replace and reboot.
func coreSuiteArgs(c conformanceConfig, env map[string]string, dir string) ([]string, error) {
	defaults := filepath.Join(c.provider, "test", "pkg", "environment", "aws")
	class, err := os.ReadFile(filepath.Join(defaults, "default_ec2nodeclass.yaml"))
	if err != nil {
		return nil, fmt.Errorf("the core suites' node class (JOIST_CONFORMANCE_PROVIDER): %w", err)
	}
	classPath := filepath.Join(dir, "default_ec2nodeclass.yaml")
	if err := os.WriteFile(classPath, []byte(strings.ReplaceAll(string(class), "$CLUSTER_NAME", env["CLUSTER_NAME"])), 0o644); err != nil {
		return nil, err
	}
	return []string{
		"--default-nodeclass=" + classPath,
		"--default-nodepool=" + filepath.Join(defaults, "default_nodepool.yaml"),
		"--repair-condition=AcceleratedHardwareReady=False/NvidiaXID79Error",
		"--reboot-condition=AcceleratedHardwareReady=False/NvidiaXID46Error",
	}, nil
}

// cleanAfterSuite removes what a suite the timeout cut short left behind,
// so the next suite finds the clean cluster it expects: the test objects
// (labelled testing/cluster, as the suites label every object they create)
// and every NodePool, EC2NodeClass and NodeOverlay, then waits up to two
// minutes for the NodeClaims to go.
func cleanAfterSuite(ctx context.Context, sb *sandbox.Sandbox) error {
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		return err
	}
	labelled := metav1.ListOptions{LabelSelector: "testing/cluster"}
	for _, r := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
		opts      metav1.ListOptions
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "default", labelled},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}, "default", labelled},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}, "default", labelled},
		{schema.GroupVersionResource{Version: "v1", Resource: "pods"}, "default", labelled},
		{schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}, "", metav1.ListOptions{}},
		{schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1alpha1", Resource: "nodeoverlays"}, "", metav1.ListOptions{}},
		{schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}, "", metav1.ListOptions{}},
	} {
		if err := dyn.Resource(r.gvr).Namespace(r.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, r.opts); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s: %w", r.gvr.Resource, err)
		}
	}
	claims := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"})
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Second) {
		list, err := claims.List(ctx, metav1.ListOptions{})
		if err == nil && len(list.Items) == 0 {
			return nil
		}
	}
	return fmt.Errorf("NodeClaims left two minutes after the suite")
}

// createNodeRole creates a node role EC2 instances may assume.
func createNodeRole(ctx context.Context, sb *sandbox.Sandbox, name string) (*iam.CreateRoleOutput, error) {
	role, err := iam.NewFromConfig(sb.AWS.AWSConfig()).CreateRole(ctx, &iam.CreateRoleInput{
		RoleName: aws.String(name),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",` +
			`"Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the node role %s: %w", name, err)
	}
	return role, nil
}

// installCRDFiles applies the given CRD manifests.
func installCRDFiles(ctx context.Context, sb *sandbox.Sandbox, files []string) error {
	if len(files) == 0 {
		return nil
	}
	manifests := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		manifests[filepath.Base(f)] = b
	}
	defs, _, err := controllerdeploy.CRDs(manifests)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(sb.Config)
	if err != nil {
		return err
	}
	if err := controllerdeploy.Apply(ctx, dyn, defs); err != nil {
		return fmt.Errorf("installing %v: %w", files, err)
	}
	return controllerdeploy.WaitEstablished(ctx, dyn, defs)
}

// createSettingsDeployment creates kube-system/karpenter as Karpenter's Helm
// chart names it: the suites read its container's environment as the
// controller's settings, override it and restore it, and wait for its
// rollouts. Here it is inert (a pause container on a system node): the
// controller under test runs beside it and does not see the changes, on
// either side.
func createSettingsDeployment(ctx context.Context, sb *sandbox.Sandbox, env map[string]string) error {
	labels := map[string]string{"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}
	var vars []corev1.EnvVar
	for _, k := range []string{"CLUSTER_NAME", "CLUSTER_ENDPOINT", "INTERRUPTION_QUEUE"} {
		vars = append(vars, corev1.EnvVar{Name: k, Value: env[k]})
	}
	for k, v := range e2eSettings(false) {
		vars = append(vars, corev1.EnvVar{Name: k, Value: v})
	}
	replicas := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "karpenter", Namespace: "kube-system", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:   []corev1.Container{{Name: "controller", Image: "registry.k8s.io/pause:3.10", Env: vars}},
					NodeSelector: map[string]string{"eks.amazonaws.com/nodegroup": sandbox.SystemNodeGroup},
					Tolerations:  []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
				},
			},
		},
	}
	cs, err := kubernetes.NewForConfig(sb.Config)
	if err != nil {
		return err
	}
	if _, err := cs.AppsV1().Deployments("kube-system").Create(ctx, d, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating kube-system/karpenter: %w", err)
	}
	return nil
}

// keepSettingsLease plays the leader election of the settings Deployment's
// pods: after a settings change the suites wait for a new pod of it to hold
// kube-system/karpenter-leader-election. The newest ready pod holds it.
func keepSettingsLease(ctx context.Context, cs kubernetes.Interface) {
	for {
		if holder := newestReadySettingsPod(ctx, cs); holder != "" {
			_ = holdLease(ctx, cs, holder+"_conformance")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func newestReadySettingsPod(ctx context.Context, cs kubernetes.Interface) string {
	pods, err := cs.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=karpenter"})
	if err != nil {
		return ""
	}
	var newest *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil || !e2e.PodReady(p) {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	if newest == nil {
		return ""
	}
	return newest.Name
}

// holdLease creates or renews the Lease with the given holder.
func holdLease(ctx context.Context, cs kubernetes.Interface, holder string) error {
	leases := cs.CoordinationV1().Leases("kube-system")
	now := metav1.NewMicroTime(time.Now())
	l, err := leases.Get(ctx, "karpenter-leader-election", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: "karpenter-leader-election", Namespace: "kube-system"},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, AcquireTime: &now, RenewTime: &now, LeaseDurationSeconds: ptrTo(int32(15))},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != holder {
		l.Spec.HolderIdentity, l.Spec.AcquireTime = &holder, &now
	}
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}

func ptrTo[T any](v T) *T { return &v }

// conformanceBegin and conformanceEnd mark the generated table in the
// Karpenter compatibility guide's template.
const (
	conformanceBegin = "<!-- make conformance: begin -->"
	conformanceEnd   = "<!-- make conformance: end -->"
)

// writeConformanceTable puts the table between the markers of
// templates/guides/karpenter-compatibility.md.tmpl (`make docs` renders the
// guide from it).
func writeConformanceTable(table string) error {
	path, err := filepath.Abs(filepath.Join("..", "..", "templates", "guides", "karpenter-compatibility.md.tmpl"))
	if err != nil {
		return err
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(doc)
	i, j := strings.Index(s, conformanceBegin), strings.Index(s, conformanceEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers", path, conformanceBegin, conformanceEnd)
	}
	s = s[:i+len(conformanceBegin)] + "\n" + table + "\n" + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
