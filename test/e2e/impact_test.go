package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// impactClass is the EC2NodeClass of the planned-impact scenarios.
const impactClass = "impact"

// impactPods is how many pods each scenario runs: one a node (1.5 vCPU of
// a large's 2), so the nodes a change replaces are the pods it moves.
const impactPods = 2

// impactQuiet is how long a scenario's pool must stay unchanged, with
// nothing launching or disrupted, before it counts as settled.
const impactQuiet = 30 * time.Second

// poolConfig is what a scenario's joist_node_pool (and joist_node_overlay)
// say; each scenario changes one thing.
type poolConfig struct {
	capacityTypes, families []string
	cpuLimit                string
	taint                   bool
	// overlayPrice, when set, is a joist_node_overlay's price_adjustment
	// for the pool's offerings.
	overlayPrice string
}

// impactCase is one change to a running pool: its planned impact, read
// from `terraform show -json` of the plan, against what the controller did
// once the applied change settled.
type impactCase struct {
	name          string
	before, after poolConfig
	// drifts picks the nodeclaims the change drifts, which the controller
	// must notice (as Drifted, or by replacing them) before the pool can
	// count as settled; it is the scenario's rule, not the prediction's.
	drifts func(v1.NodeClaim) bool

	tf        *tfDir
	original  map[string]bool // the pool's nodeclaims when planned
	planned   plannedImpact
	costNow   float64
	nodesNow  int
	replaced  int
	pending   int
	costAfter float64
}

// plannedImpact is planned_impact as the plan's JSON carries it.
type plannedImpact struct {
	CostNow      float64 `json:"cost_per_hour_now"`
	CostAfter    float64 `json:"cost_per_hour_after"`
	NodesNow     int     `json:"nodes_now"`
	NodesAfter   int     `json:"nodes_after"`
	Drifted      int     `json:"drifted_nodes"`
	Replaced     int     `json:"replaced_nodes"`
	Unplaceable  int     `json:"pods_without_pool"`
	PendingAfter int     `json:"pods_pending_after"`
}

// TestPlannedImpact: for five kinds of change to a running pool, the
// prediction terraform plan shows is what the controller does: the nodes
// it replaces, the pods left Pending, and the pool's cost per hour (within
// 10 %). The five run in a world of their own, in their own pools and
// namespaces, in phases (set up, plan, apply) so that every plan reads a
// settled cluster.
func TestPlannedImpact(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatal("the terraform CLI is not on PATH")
	}
	ownWorld(t, worldOptions{name: "impact", replicas: 1})
	nodeClass(t, impactClass)
	onDemandCM := poolConfig{capacityTypes: []string{v1.CapacityTypeOnDemand}, families: []string{"c5", "m5"}, cpuLimit: "100"}
	with := func(c poolConfig, edit func(*poolConfig)) poolConfig { edit(&c); return c }
	cases := []*impactCase{
		{name: "impact-narrow", drifts: labelled(v1.CapacityTypeLabelKey, v1.CapacityTypeSpot),
			before: with(onDemandCM, func(c *poolConfig) { c.capacityTypes = []string{v1.CapacityTypeSpot, v1.CapacityTypeOnDemand} }),
			after:  onDemandCM},
		{name: "impact-family", drifts: labelled(v1.LabelInstanceFamily, "c5"),
			before: onDemandCM,
			after:  with(onDemandCM, func(c *poolConfig) { c.families = []string{"m5"} })},
		{name: "impact-limit",
			before: onDemandCM,
			after:  with(onDemandCM, func(c *poolConfig) { c.cpuLimit = "1" })},
		{name: "impact-taint", drifts: func(v1.NodeClaim) bool { return true },
			before: onDemandCM,
			after:  with(onDemandCM, func(c *poolConfig) { c.taint = true })},
		{name: "impact-overlay",
			before: with(onDemandCM, func(c *poolConfig) { c.overlayPrice = "+10%" }),
			after:  with(onDemandCM, func(c *poolConfig) { c.overlayPrice = "+50%" })},
	}
	phase := func(name string, run func(*impactCase, *testing.T)) {
		t.Run(name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					run(c, t)
				})
			}
		})
	}
	for _, c := range cases {
		var err error
		if c.tf, err = newTFDir(t, worldOf(t)); err != nil { // the test's: it outlives the phases
			t.Fatal(err)
		}
	}
	phase("setup", (*impactCase).setup)
	if t.Failed() {
		return
	}
	phase("plan", (*impactCase).plan)
	if t.Failed() {
		return
	}
	phase("apply", (*impactCase).applyAndMeasure)
	t.Log("predicted vs actual, once settled:\n" + impactTable(cases))
}

// setup applies the pool as it was and runs its pods.
func (c *impactCase) setup(t *testing.T) {
	if err := c.tf.write(impactHCL(c.name, c.before)); err != nil {
		t.Fatal(err)
	}
	if out, err := c.tf.run("apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
		t.Fatalf("terraform apply of the pool as it was: %v\n%s", err, out)
	}
	ns := namespace(t, c.name)
	create(t, deployment(ns, "pause", impactPods, podSpec(c.name, requests("1500m", "1Gi"))))
	waitRunning(t, ns, impactPods)
	c.settle(t, nil)
}

// plan runs terraform plan of the change and reads its planned_impact.
func (c *impactCase) plan(t *testing.T) {
	c.costNow, c.nodesNow = c.cost(t, c.before.overlayPrice)
	c.original = map[string]bool{}
	for _, nc := range claimsOf(t, c.name) {
		c.original[nc.Name] = true
	}
	if err := c.tf.write(impactHCL(c.name, c.after)); err != nil {
		t.Fatal(err)
	}
	if out, err := c.tf.run("plan", "-input=false", "-no-color", "-out=change.tfplan"); err != nil {
		t.Fatalf("terraform plan: %v\n%s", err, out)
	}
	out, err := c.tf.run("show", "-json", "change.tfplan")
	if err != nil {
		t.Fatalf("terraform show -json: %v\n%s", err, out)
	}
	if c.planned, err = impactOf(out, c.name); err != nil {
		t.Fatal(err)
	}
	if c.planned.NodesNow != c.nodesNow {
		t.Errorf("planned_impact.nodes_now %d, the pool has %d", c.planned.NodesNow, c.nodesNow)
	}
}

// applyAndMeasure applies the planned change, waits until the pool has
// settled and compares what happened with the prediction.
func (c *impactCase) applyAndMeasure(t *testing.T) {
	// The configuration, not the saved plan: a saved plan applied by
	// another command is predicted afresh at apply, and the other
	// scenarios' applies move the cluster meanwhile.
	if out, err := c.tf.run("apply", "-auto-approve", "-input=false", "-no-color"); err != nil {
		t.Fatalf("terraform apply of the change: %v\n%s", err, out)
	}
	c.settle(t, c.drifts)
	for _, nc := range claimsOf(t, c.name) {
		delete(c.original, nc.Name)
	}
	c.replaced = len(c.original)
	for _, p := range pods(t, c.name, map[string]string{"app": "pause"}) {
		if p.Status.Phase == corev1.PodPending {
			c.pending++
		}
	}
	c.costAfter, _ = c.cost(t, c.after.overlayPrice)
	t.Logf("predicted: %d replaced, %d Pending, $%.4f/h; actual: %d replaced, %d Pending, $%.4f/h",
		c.planned.Replaced, c.planned.PendingAfter, c.planned.CostAfter, c.replaced, c.pending, c.costAfter)
	if c.planned.Replaced != c.replaced {
		t.Errorf("predicted %d nodes replaced, the controller replaced %d", c.planned.Replaced, c.replaced)
	}
	if c.planned.PendingAfter != c.pending {
		t.Errorf("predicted %d pods Pending, %d are", c.planned.PendingAfter, c.pending)
	}
	if math.Abs(c.planned.CostAfter-c.costAfter) > 0.1*c.costAfter {
		t.Errorf("predicted $%.4f/h, the pool costs $%.4f/h: more than 10%% off", c.planned.CostAfter, c.costAfter)
	}
}

// labelled picks the nodeclaims labelled key=value.
func labelled(key, value string) func(v1.NodeClaim) bool {
	return func(nc v1.NodeClaim) bool { return nc.Labels[key] == value }
}

// settle waits until the pool is at rest: nothing launching, deleting or
// tainted for disruption, and the pool's nodeclaims and the scenario's pod
// phases unchanged for impactQuiet. With drifts it first waits until the
// controller has acted on the change: every nodeclaim planned on that
// drifts picks is gone or Drifted.
func (c *impactCase) settle(t *testing.T, drifts func(v1.NodeClaim) bool) {
	t.Helper()
	if drifts != nil {
		eventually(t, c.name+": the change noticed on every node it drifts", func() (bool, string) {
			for _, nc := range claimsOf(t, c.name) {
				if c.original[nc.Name] && drifts(nc) && !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeDrifted) {
					return false, "nodeclaim " + nc.Name + " not Drifted"
				}
			}
			return true, ""
		})
	}
	var last string
	var since time.Time
	waitLong(t, c.name+" settled", 2*waitTimeout, func() (bool, string) {
		key, busy := c.state(t)
		if key != last {
			last, since = key, time.Now()
		}
		if busy != "" {
			return false, busy
		}
		return time.Since(since) >= impactQuiet, "settling: " + key
	})
}

// state is the pool's nodeclaims and the scenario's pod phases, and what
// is still in flight.
func (c *impactCase) state(t *testing.T) (key, busy string) {
	var parts []string
	for _, nc := range claimsOf(t, c.name) {
		parts = append(parts, nc.Name)
		switch {
		case nc.DeletionTimestamp != nil:
			busy = "nodeclaim " + nc.Name + " deleting"
		case !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeInitialized):
			busy = "nodeclaim " + nc.Name + " launching"
		}
	}
	if n := disrupting(t, c.name); n > 0 {
		busy = fmt.Sprintf("%d nodes disrupting", n)
	}
	for _, p := range pods(t, c.name, map[string]string{"app": "pause"}) {
		parts = append(parts, p.Name+"="+string(p.Status.Phase))
	}
	return strings.Join(parts, ","), busy
}

// cost is the pool's live instances priced as the controller prices
// them, with the overlay's price adjustment.
func (c *impactCase) cost(t *testing.T, overlay string) (float64, int) {
	t.Helper()
	ctx := context.Background()
	nc := &awsv1.EC2NodeClass{}
	if err := worldOf(t).kube.Get(ctx, client.ObjectKey{Name: impactClass}, nc); err != nil {
		t.Fatal(err)
	}
	var insts []ec2types.Instance
	for _, inst := range instances(t, c.name) {
		insts = append(insts, inst)
	}
	cost, err := sandbox.ControllerCost(ctx, worldOf(t).sim.AWSConfig(), nc, insts, overlay)
	if err != nil {
		t.Fatal(err)
	}
	return cost, len(insts)
}

// impactOf reads the pool's planned_impact from `terraform show -json`:
// the joist_node_pool's, or the joist_node_overlay's entry for the pool.
func impactOf(planJSON []byte, pool string) (plannedImpact, error) {
	var plan struct {
		ResourceChanges []struct {
			Type   string `json:"type"`
			Change struct {
				Actions []string                   `json:"actions"`
				After   map[string]json.RawMessage `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(planJSON, &plan); err != nil {
		return plannedImpact{}, fmt.Errorf("reading the plan's JSON: %w", err)
	}
	for _, rc := range plan.ResourceChanges {
		raw := rc.Change.After["planned_impact"]
		if len(raw) == 0 || string(raw) == "null" || rc.Change.Actions[0] == "no-op" {
			continue
		}
		var out plannedImpact
		switch rc.Type {
		case "joist_node_pool":
			err := json.Unmarshal(raw, &out)
			return out, err
		case "joist_node_overlay":
			var byPool map[string]plannedImpact
			if err := json.Unmarshal(raw, &byPool); err != nil {
				return out, err
			}
			if got, ok := byPool[pool]; ok {
				return got, nil
			}
		}
	}
	return plannedImpact{}, fmt.Errorf("no planned_impact for pool %s in the plan:\n%s", pool, planJSON)
}

// impactTable is the scenarios' predictions against what happened.
func impactTable(cases []*impactCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| change | nodes | replaced (predicted / actual) | pods Pending | $/h now (predicted / actual) | $/h after (predicted / actual) |\n|---|---|---|---|---|---|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %s | %d | %d / %d | %d / %d | %.4f / %.4f | %.4f / %.4f |\n", strings.TrimPrefix(c.name, "impact-"), c.nodesNow,
			c.planned.Replaced, c.replaced, c.planned.PendingAfter, c.pending, c.planned.CostNow, c.costNow, c.planned.CostAfter, c.costAfter)
	}
	return b.String()
}

// impactHCL is a scenario's Terraform configuration: the provider on the
// world's cluster, the pool and, with an overlay price, the overlay.
func impactHCL(pool string, c poolConfig) string {
	list := func(vs []string) string { return `["` + strings.Join(vs, `", "`) + `"]` }
	var b strings.Builder
	fmt.Fprintf(&b, `resource "joist_node_pool" "this" {
  name = %q
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = %q }
      requirements = [
        { key = "kubernetes.io/os", operator = "In", values = ["linux"] },
        { key = "kubernetes.io/arch", operator = "In", values = ["amd64"] },
        { key = "karpenter.sh/capacity-type", operator = "In", values = %s },
        { key = "karpenter.k8s.aws/instance-family", operator = "In", values = %s },
        { key = "karpenter.k8s.aws/instance-size", operator = "In", values = ["large"] },
      ]
`, pool, impactClass, list(c.capacityTypes), list(c.families))
	if c.taint {
		b.WriteString("      taints = [{ key = \"impact\", value = \"planned\", effect = \"NoSchedule\" }]\n")
	}
	fmt.Fprintf(&b, `      expire_after = "720h"
    }
  }
  limits = { cpu = %q }
  disruption = {
    consolidation_policy = "WhenEmptyOrUnderutilized"
    consolidate_after    = "Never"
    budgets              = [{ nodes = "100%%" }]
  }
}
`, c.cpuLimit)
	if c.overlayPrice != "" {
		fmt.Fprintf(&b, `
resource "joist_node_overlay" "this" {
  name             = %q
  requirements     = [{ key = "karpenter.sh/nodepool", operator = "In", values = [joist_node_pool.this.name] }]
  price_adjustment = %q
}
`, pool, c.overlayPrice)
	}
	return b.String()
}

// tfDir is a Terraform working directory with the locally built provider
// (a development override, so no init) pointed at a world.
type tfDir struct {
	dir string
	env []string
}

func newTFDir(t *testing.T, w *world) (*tfDir, error) {
	dir := t.TempDir()
	rc := filepath.Join(dir, "dev.tfrc")
	if err := os.WriteFile(rc, []byte(fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n",
		"joistdev/joist", w.sandbox.BinDir)), 0o644); err != nil {
		return nil, err
	}
	providers := fmt.Sprintf(`terraform {
  required_providers {
    joist = { source = "joistdev/joist" }
  }
}

provider "joist" {
  cluster_name = %q
  kubernetes   = { config_path = %q }
}
`, clusterName, w.sandbox.Kubeconfig)
	if err := os.WriteFile(filepath.Join(dir, "providers.tf"), []byte(providers), 0o644); err != nil {
		return nil, err
	}
	tf := &tfDir{dir: dir, env: os.Environ()}
	for k, v := range w.sandbox.Env() {
		tf.env = append(tf.env, k+"="+v)
	}
	tf.env = append(tf.env, "TF_CLI_CONFIG_FILE="+rc, "TF_DATA_DIR="+filepath.Join(dir, ".terraform"), "TF_IN_AUTOMATION=1", "TF_INPUT=0")
	return tf, nil
}

// write replaces the scenario's configuration.
func (tf *tfDir) write(hcl string) error {
	return os.WriteFile(filepath.Join(tf.dir, "main.tf"), []byte(hcl), 0o644)
}

// run runs one terraform command in the directory.
func (tf *tfDir) run(args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "terraform", append([]string{"-chdir=" + tf.dir}, args...)...)
	cmd.Env = tf.env
	return cmd.CombinedOutput()
}
