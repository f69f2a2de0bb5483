package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// What the demo creates, and the names examples/quickstart gives.
const (
	ClusterName   = "joist-sandbox"
	Namespace     = "demo"
	GeneralPool   = "general-purpose"
	OnDemandPool  = "on-demand"
	criticalLabel = "workload-class"
	criticalValue = "critical"
)

// Options configures a demo run.
type Options struct {
	// Root is the repository: bin/ (make tools, make build) and
	// examples/quickstart.
	Root string
	// Dir is the sandbox's state directory. Default: Root/.sandbox.
	Dir string
	// Short runs fewer pods and shorter waits (what `make test` runs).
	Short bool
	// Out receives the progress and the summary.
	Out io.Writer
	// AfterPhase, when set, is called after each phase with its outcome;
	// an error stops the demo. Tests check each phase here.
	AfterPhase func(Phase) error
	// BeforeStop, when set, is called by Down after terraform destroy and
	// before the sandbox stops. Tests check that nothing is left here.
	BeforeStop func(*World) error
}

// Phase is what one step of the demo did and the state it left.
type Phase struct {
	Name string
	Took time.Duration
	Snapshot
	// Note says in a few words what happened.
	Note string
	// Interrupted is the instance the spot interruption reclaimed, and
	// NoticeAt when its two-minute warning was sent.
	Interrupted string
	NoticeAt    time.Time
	// Images are the AMIs the drift phase released.
	Images []string
	// PlanExitCode is what `terraform plan -detailed-exitcode` returned
	// right after the apply phase (0: nothing to change), and PlanOutput
	// its output.
	PlanExitCode int
	PlanOutput   string
	// Impact is the planned change's prediction and what happened.
	Impact *Impact
}

// Report is the whole run, phase by phase.
type Report struct{ Phases []Phase }

// plan sizes a run.
type plan struct {
	up, down, critical int32
	consolidateAfter   time.Duration
	// quiet is how long the NodeClaims must stay unchanged after a
	// scale-down before consolidation counts as done.
	quiet   time.Duration
	timeout time.Duration
}

func (o Options) plan() plan {
	if o.Short {
		return plan{up: 10, down: 2, critical: 1, consolidateAfter: 10 * time.Second, quiet: 30 * time.Second, timeout: 5 * time.Minute}
	}
	return plan{up: 40, down: 8, critical: 2, consolidateAfter: 30 * time.Second, quiet: 45 * time.Second, timeout: 10 * time.Minute}
}

func (o *Options) defaults() error {
	if o.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		o.Root = wd
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return err
	}
	o.Root = root
	if o.Dir == "" {
		o.Dir = filepath.Join(o.Root, ".sandbox")
	}
	if o.Dir, err = filepath.Abs(o.Dir); err != nil {
		return err
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

func (o Options) binary() string { return filepath.Join(o.Root, "bin", "terraform-provider-joist") }

// variables are the quickstart's inputs for the demo: the sandbox's
// kubeconfig, a short consolidateAfter so consolidation shows within the
// demo, and spot-to-spot consolidation so a spot node can be replaced by a
// cheaper one.
func (o Options) variables() map[string]string {
	return map[string]string{
		"cluster_name":               ClusterName,
		"kubeconfig_path":            filepath.Join(o.Dir, "kubeconfig"),
		"consolidate_after":          o.plan().consolidateAfter.String(),
		"spot_to_spot_consolidation": "true",
	}
}

// Run is `make demo`.
func Run(ctx context.Context, opts Options) (*Report, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	d := &demo{opts: opts, plan: opts.plan(), report: &Report{}}
	return d.report, d.run(ctx)
}

type demo struct {
	opts   Options
	plan   plan
	w      *World
	tf     *terraform
	report *Report
}

func (d *demo) say(format string, args ...any) { fmt.Fprintf(d.opts.Out, format+"\n", args...) }

func (d *demo) run(ctx context.Context) error {
	steps := []struct {
		name string
		do   func(context.Context, *Phase) error
	}{
		{"terraform apply", d.apply},
		{fmt.Sprintf("scale up to %d+%d pods", d.plan.up, d.plan.critical), d.scaleUp},
		{fmt.Sprintf("scale down to %d+%d pods", d.plan.down, d.plan.critical), d.scaleDown},
		{"spot interruption", d.interrupt},
		{"planned change", d.plannedChange},
		{"AMI release (drift)", d.drift},
	}
	if err := d.sandboxUp(ctx); err != nil {
		return err
	}
	for i, s := range steps {
		d.say("\n== %d/%d %s", i+1, len(steps), s.name)
		p := Phase{Name: s.name}
		start := time.Now()
		if err := s.do(ctx, &p); err != nil {
			return fmt.Errorf("demo: %s: %w", s.name, err)
		}
		p.Took = time.Since(start)
		snap, err := d.w.Observe(ctx, ClusterName, Namespace)
		if err != nil {
			return err
		}
		p.Snapshot = snap
		d.say("   done in %s: %s", p.Took.Round(time.Second), p.Note)
		d.report.Phases = append(d.report.Phases, p)
		if d.opts.AfterPhase != nil {
			if err := d.opts.AfterPhase(p); err != nil {
				return fmt.Errorf("demo: after %s: %w", s.name, err)
			}
		}
	}
	d.say("\n== Summary\n")
	d.report.Write(d.opts.Out)
	d.lookAround()
	return nil
}

// sandboxUp starts the sandbox (or finds it running) and connects to it.
func (d *demo) sandboxUp(ctx context.Context) error {
	d.say("== sandbox: local control plane, kube-scheduler, kube-controller-manager, kwok and awssim")
	cmd := exec.CommandContext(ctx, d.opts.binary(), "sandbox", "up", "--dir", d.opts.Dir, "--cluster-name", ClusterName)
	if err := relay(cmd, d.opts.Out, func(l string) bool { return strings.HasPrefix(l, "sandbox:") }); err != nil {
		return fmt.Errorf("demo: sandbox up: %w (log %s)", err, filepath.Join(d.opts.Dir, "sandbox.log"))
	}
	w, err := Connect(d.opts.Dir)
	if err != nil {
		return err
	}
	d.w = w
	d.tf, err = newTerraform(w, d.opts)
	return err
}

// relay runs cmd, printing the output lines that keep passes, indented.
func relay(cmd *exec.Cmd, out io.Writer, keep func(string) bool) error {
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		if keep(sc.Text()) {
			fmt.Fprintf(out, "  %s\n", sc.Text())
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func (d *demo) apply(ctx context.Context, p *Phase) error {
	d.say("   examples/quickstart: node role, controller role, interruption queue, controller, EC2NodeClass, NodePools %q and %q", GeneralPool, OnDemandPool)
	if err := d.tf.run(ctx, "apply"); err != nil {
		return err
	}
	// A clean apply leaves nothing for the next plan to change.
	code, out, err := d.tf.planExitCode(ctx)
	if err != nil {
		return err
	}
	p.PlanExitCode, p.PlanOutput = code, out
	if code == 0 {
		d.say("   terraform plan -detailed-exitcode: exit 0, no changes")
	} else {
		d.say("   terraform plan -detailed-exitcode: exit %d, the plan after apply is not empty (%s)", code, filepath.Join(d.opts.Dir, "logs", "terraform-plan.log"))
	}
	err = d.wait(ctx, "the NodePools Ready", func(Snapshot) (bool, string) {
		for _, name := range []string{GeneralPool, OnDemandPool} {
			np := &v1.NodePool{}
			if err := d.w.Kube.Get(ctx, client.ObjectKey{Name: name}, np); err != nil {
				return false, err.Error()
			}
			if !meta.IsStatusConditionTrue(np.Status.Conditions, v1.ConditionTypeReady) {
				return false, fmt.Sprintf("NodePool %s not Ready", name)
			}
		}
		return true, ""
	})
	p.Note = "AWS wiring and the controller in place; both NodePools Ready"
	return err
}

func (d *demo) scaleUp(ctx context.Context, p *Phase) error {
	if err := d.ensureNamespace(ctx); err != nil {
		return err
	}
	if err := d.deploy(ctx, "inflate", d.plan.up, false); err != nil {
		return err
	}
	if err := d.deploy(ctx, "critical", d.plan.critical, true); err != nil {
		return err
	}
	want := int(d.plan.up + d.plan.critical)
	err := d.wait(ctx, fmt.Sprintf("%d pods Running", want), func(s Snapshot) (bool, string) {
		return s.Running == want && s.Pending == 0 && s.Launching == 0, ""
	})
	p.Note = fmt.Sprintf("%d pods Running on new nodes; %q pods on the tainted on-demand pool", want, "critical")
	return err
}

func (d *demo) scaleDown(ctx context.Context, p *Phase) error {
	before, err := d.w.Observe(ctx, ClusterName, Namespace)
	if err != nil {
		return err
	}
	if err := d.deploy(ctx, "inflate", d.plan.down, false); err != nil {
		return err
	}
	want := int(d.plan.down + d.plan.critical)
	// Consolidation is done when the claims have not changed for a quiet
	// period that starts once consolidateAfter has passed.
	start := time.Now()
	var last string
	var since time.Time
	err = d.wait(ctx, "consolidation", func(s Snapshot) (bool, string) {
		key := strings.Join(s.claims, ",")
		if key != last {
			last, since = key, time.Now()
		}
		from := since
		if earliest := start.Add(d.plan.consolidateAfter); from.Before(earliest) {
			from = earliest
		}
		settled := s.Running == want && s.Pending == 0 && s.Launching == 0 && s.Disrupting == 0
		return settled && time.Since(from) >= d.plan.quiet, ""
	})
	after, _ := d.w.Observe(ctx, ClusterName, Namespace)
	p.Note = fmt.Sprintf("consolidated %d → %d nodes, $%.3f/h → $%.3f/h", before.Instances, after.Instances, before.CostPerHour, after.CostPerHour)
	return err
}

func (d *demo) interrupt(ctx context.Context, p *Phase) error {
	insts, err := d.w.Instances(ctx, ClusterName)
	if err != nil {
		return err
	}
	var spot []ec2types.Instance
	for _, i := range insts {
		if capacityType(i) == v1.CapacityTypeSpot {
			spot = append(spot, i)
		}
	}
	if len(spot) == 0 {
		return errors.New("no spot instance to interrupt: the general-purpose pool launched none")
	}
	sort.Slice(spot, func(i, j int) bool { return *spot[i].InstanceId < *spot[j].InstanceId })
	target := *spot[0].InstanceId
	d.say("   awssim sends the two-minute spot interruption warning for %s (%s); EventBridge routes it to the queue", target, spot[0].InstanceType)
	p.Interrupted, p.NoticeAt = target, time.Now()
	if err := d.w.Admin(ctx, "POST", "/_awssim/ec2/instances/"+target+"/spot-interruption", map[string]any{"NoticeSeconds": 120}, nil); err != nil {
		return err
	}
	notice := p.NoticeAt
	want := int(d.plan.down + d.plan.critical)
	err = d.wait(ctx, "the interrupted node replaced", func(s Snapshot) (bool, string) {
		if slices.Contains(s.instanceIDs, target) || slices.ContainsFunc(s.claimProviderIDs, func(id string) bool { return strings.HasSuffix(id, "/"+target) }) {
			return false, ""
		}
		return s.Running == want && s.Pending == 0 && s.Launching == 0 && s.Disrupting == 0, ""
	})
	p.Note = fmt.Sprintf("%s drained and terminated; its pods Running elsewhere %s into the 2m notice", target, time.Since(notice).Round(time.Second))
	return err
}

func (d *demo) drift(ctx context.Context, p *Phase) error {
	for _, arch := range []string{"x86_64", "arm64"} {
		var rel struct{ ImageID string }
		if err := d.w.Admin(ctx, "POST", "/_awssim/amis", map[string]string{"Family": "al2023", "Architecture": arch, "Variant": "standard"}, &rel); err != nil {
			return err
		}
		p.Images = append(p.Images, rel.ImageID)
	}
	d.say("   a new EKS AL2023 release: %s; the alias al2023@latest now resolves to it and every node drifts", strings.Join(p.Images, ", "))
	want := int(d.plan.down + d.plan.critical)
	var replaced int
	err := d.wait(ctx, "every node on the new AMI", func(s Snapshot) (bool, string) {
		replaced = 0
		for _, img := range s.claimImages {
			if slices.Contains(p.Images, img) {
				replaced++
			}
		}
		return replaced == len(s.claimImages) && s.Running == want && s.Pending == 0 && s.Launching == 0 && s.Disrupting == 0, ""
	})
	p.Note = fmt.Sprintf("%d nodes replaced within the NodePools' disruption budgets", replaced)
	return err
}

// wait polls until done holds, printing the live view when it changes.
func (d *demo) wait(ctx context.Context, what string, done func(Snapshot) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, d.plan.timeout)
	defer cancel()
	start := time.Now()
	var shown, why string
	for {
		s, err := d.w.Observe(ctx, ClusterName, Namespace)
		if err == nil {
			if line := s.Line(); line != shown {
				d.say("   %5s  %s", time.Since(start).Round(time.Second), line)
				shown = line
			}
			var ok bool
			if ok, why = done(s); ok {
				return nil
			}
		} else {
			why = err.Error()
		}
		select {
		case <-ctx.Done():
			if why == "" {
				why = shown
			}
			return fmt.Errorf("waiting for %s: %w (last: %s); the controller's log is under %s", what, ctx.Err(), why, filepath.Join(d.w.Dir, "logs"))
		case <-time.After(time.Second):
		}
	}
}

func (d *demo) ensureNamespace(ctx context.Context) error {
	err := d.w.Kube.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// deploy creates or scales one of the demo's Deployments: pause pods of
// 1 CPU and 1.5Gi; critical ones tolerate and select the on-demand pool.
func (d *demo) deploy(ctx context.Context, name string, replicas int32, critical bool) error {
	dep := &appsv1.Deployment{}
	err := d.w.Kube.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: name}, dep)
	if err == nil {
		patch := client.MergeFrom(dep.DeepCopy())
		dep.Spec.Replicas = &replicas
		return d.w.Kube.Patch(ctx, dep, patch)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	return d.w.Kube.Create(ctx, workload(name, replicas, critical))
}

func workload(name string, replicas int32, critical bool) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := corev1.PodSpec{
		TerminationGracePeriodSeconds: new(int64),
		Containers: []corev1.Container{{
			Name: "pause", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1536Mi"),
			}},
		}},
	}
	if critical {
		spec.NodeSelector = map[string]string{criticalLabel: criticalValue}
		spec.Tolerations = []corev1.Toleration{{Key: criticalLabel, Operator: corev1.TolerationOpEqual, Value: criticalValue, Effect: corev1.TaintEffectNoSchedule}}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// lookAround prints how to inspect what the demo left running.
func (d *demo) lookAround() {
	dir := d.opts.Dir
	if r, err := filepath.Rel(d.opts.Root, dir); err == nil && !strings.HasPrefix(r, "..") {
		dir = r
	}
	d.say(`
The sandbox keeps running. Look around:

  bin/kubectl --kubeconfig %[1]s/kubeconfig get nodepools,nodeclaims,nodes -o wide
  bin/kubectl --kubeconfig %[1]s/kubeconfig -n %[2]s get pods -o wide
  bin/kubectl --kubeconfig %[1]s/kubeconfig get events -A
  source %[1]s/env && TF_CLI_CONFIG_FILE=%[3]s/dev.tfrc TF_DATA_DIR=%[3]s/terraform \
    terraform -chdir=%[1]s/quickstart plan %[4]s

Logs are in %[1]s/logs. Remove everything with: make demo-down`, dir, Namespace, d.opts.Dir, strings.Join(d.tf.vars, " "))
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
