package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// The planned change: the general-purpose pool narrowed to on-demand, its
// spot nodes drift and are replaced.
const (
	spotAndOnDemand = `{ key = "karpenter.sh/capacity-type", operator = "In", values = ["spot", "on-demand"] },`
	onDemandOnly    = `{ key = "karpenter.sh/capacity-type", operator = "In", values = ["on-demand"] },`
)

// Impact is the planned change's prediction, from `terraform show -json`
// of its plan, and what the controller did once it settled.
type Impact struct {
	Predicted, Actual ImpactFigures
}

// ImpactFigures are the compared figures of the general-purpose pool.
type ImpactFigures struct {
	CostPerHour float64 `json:"cost_per_hour_after"`
	Replaced    int     `json:"replaced_nodes"`
	Pending     int     `json:"pods_pending_after"`
}

// plannedChange plans the change, prints the prediction, applies it,
// waits until the pool has settled and compares.
func (d *demo) plannedChange(ctx context.Context, p *Phase) error {
	if err := d.tf.edit("main.tf", spotAndOnDemand, onDemandOnly); err != nil {
		return err
	}
	d.say("   %s: capacity-type [spot, on-demand] becomes [on-demand]", GeneralPool)
	predicted, err := d.tf.plannedImpact(ctx, "joist_node_pool.general")
	if err != nil {
		return err
	}
	d.say("   terraform plan predicts: $%.4f/h after; nodes replaced: %d; pods Pending: %d", predicted.CostPerHour, predicted.Replaced, predicted.Pending)
	before, err := d.poolClaims(ctx)
	if err != nil {
		return err
	}
	if err := d.tf.run(ctx, "apply"); err != nil {
		return err
	}
	if err := d.settle(ctx, before); err != nil {
		return err
	}
	actual, err := d.measure(ctx, before)
	if err != nil {
		return err
	}
	p.Impact = &Impact{Predicted: predicted, Actual: actual}
	p.Impact.Write(d.opts.Out)
	p.Note = fmt.Sprintf("predicted %d replaced, $%.4f/h; the controller replaced %d, $%.4f/h", predicted.Replaced, predicted.CostPerHour, actual.Replaced, actual.CostPerHour)
	return nil
}

// Write prints the prediction against what happened.
func (i *Impact) Write(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   \t%s\tPREDICTED\tACTUAL\n", GeneralPool)
	fmt.Fprintf(tw, "   \t$/h\t%.4f\t%.4f\n", i.Predicted.CostPerHour, i.Actual.CostPerHour)
	fmt.Fprintf(tw, "   \tnodes replaced\t%d\t%d\n", i.Predicted.Replaced, i.Actual.Replaced)
	fmt.Fprintf(tw, "   \tpods Pending\t%d\t%d\n", i.Predicted.Pending, i.Actual.Pending)
	tw.Flush()
}

// poolClaims are the general-purpose pool's NodeClaims by name.
func (d *demo) poolClaims(ctx context.Context) (map[string]*v1.NodeClaim, error) {
	list := &v1.NodeClaimList{}
	if err := d.w.Kube.List(ctx, list, client.MatchingLabels{v1.NodePoolLabelKey: GeneralPool}); err != nil {
		return nil, err
	}
	out := map[string]*v1.NodeClaim{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// settle waits until every spot NodeClaim of before is gone or Drifted, then
// until the pool's NodeClaims and the demo's pods have stayed as they are,
// with nothing launching or disrupted, for the quiet period.
func (d *demo) settle(ctx context.Context, before map[string]*v1.NodeClaim) error {
	err := d.wait(ctx, "the change noticed on every node", func(Snapshot) (bool, string) {
		claims, err := d.poolClaims(ctx)
		if err != nil {
			return false, err.Error()
		}
		for name, c := range claims {
			was := before[name]
			if was != nil && was.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot && !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeDrifted) {
				return false, "NodeClaim " + name + " not Drifted yet"
			}
		}
		return true, ""
	})
	if err != nil {
		return err
	}
	var last string
	var since time.Time
	return d.wait(ctx, "the pool settled", func(s Snapshot) (bool, string) {
		key := strings.Join(s.claims, ",") + fmt.Sprintf("|%d/%d", s.Pending, s.Running)
		if key != last {
			last, since = key, time.Now()
		}
		return s.Launching == 0 && s.Disrupting == 0 && time.Since(since) >= d.plan.quiet, ""
	})
}

// measure is what the change did: the NodeClaims of before gone, the
// demo's pods Pending, and the pool's cost as the controller prices it.
func (d *demo) measure(ctx context.Context, before map[string]*v1.NodeClaim) (ImpactFigures, error) {
	var out ImpactFigures
	after, err := d.poolClaims(ctx)
	if err != nil {
		return out, err
	}
	for name := range before {
		if after[name] == nil {
			out.Replaced++
		}
	}
	snap, err := d.w.Observe(ctx, ClusterName, Namespace)
	if err != nil {
		return out, err
	}
	out.Pending = snap.Pending
	insts, err := d.w.describeInstances(ctx,
		ec2types.Filter{Name: aws.String("tag:kubernetes.io/cluster/" + ClusterName), Values: []string{"owned"}},
		ec2types.Filter{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{GeneralPool}},
		ec2types.Filter{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	)
	if err != nil {
		return out, err
	}
	nc := &awsv1.EC2NodeClass{}
	if err := d.w.Kube.Get(ctx, client.ObjectKey{Name: "default"}, nc); err != nil {
		return out, err
	}
	out.CostPerHour, err = sandbox.ControllerCost(ctx, d.w.AWS, nc, insts, "")
	return out, err
}

// edit replaces old with new in the working copy's file.
func (tf *terraform) edit(file, old, new string) error {
	path := filepath.Join(tf.config, file)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), old) {
		return fmt.Errorf("demo: %s has no %q to change", path, old)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644)
}

// plannedImpact runs terraform plan and reads the resource's planned_impact
// from `terraform show -json` of the plan.
func (tf *terraform) plannedImpact(ctx context.Context, address string) (ImpactFigures, error) {
	var out ImpactFigures
	planFile := filepath.Join(tf.dir, "impact.tfplan")
	if _, err := tf.output(ctx, append([]string{"plan", "-input=false", "-no-color", "-out=" + planFile}, tf.vars...)...); err != nil {
		return out, err
	}
	js, err := tf.output(ctx, "show", "-json", planFile)
	if err != nil {
		return out, err
	}
	var plan struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				After struct {
					PlannedImpact *ImpactFigures `json:"planned_impact"`
				} `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(js, &plan); err != nil {
		return out, fmt.Errorf("demo: reading the plan's JSON: %w", err)
	}
	for _, rc := range plan.ResourceChanges {
		if rc.Address == address && rc.Change.After.PlannedImpact != nil {
			return *rc.Change.After.PlannedImpact, nil
		}
	}
	return out, fmt.Errorf("demo: the plan has no planned_impact for %s", address)
}

// output runs terraform with args and returns its standard output, keeping
// the whole output in a log.
func (tf *terraform) output(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "terraform", append([]string{"-chdir=" + tf.config}, args...)...)
	cmd.Env = tf.env
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if exit, ok := err.(*exec.ExitError); ok {
			stderr = string(exit.Stderr)
		}
		return out, fmt.Errorf("terraform %s failed (%v):\n%s%s", args[0], err, out, stderr)
	}
	return out, nil
}
