package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
)

func nodeClassImpactAttribute() schema.MapNestedAttribute {
	return schema.MapNestedAttribute{
		Computed: true,
		MarkdownDescription: "What the planned change does to each node pool that uses this class, by pool name, predicted at " +
			"plan time as `joist_node_pool`'s `planned_impact` is (the same attributes) with the controller's drift rules: " +
			"nodes drift when the class's hash changes (user data, block devices, kubelet, metadata options, the AMI family, ...) " +
			"or when they run an image the class no longer resolves to for their instance type (a pinned or changed " +
			"`ami_selector_terms`, resolved now as the controller would), and are replaced in the pools' budgets' waves. " +
			"The price changes only when the change alters the offerings (e.g. AMIs for fewer architectures). " +
			"Empty on create and when no pool uses the class; unknown when the cluster or AWS cannot be reached; null after apply.",
		NestedObject: schema.NestedAttributeObject{Attributes: plannedImpactAttribute().Attributes},
	}
}

// impact predicts, pool by pool, what the planned class does to the pools
// that use it.
func (r *EC2NodeClassResource) impact(ctx context.Context, plan map[string]attr.Value, diags *diag.Diagnostics) types.Map {
	name := plan["name"].(basetypes.StringValue).ValueString()
	values, lines, err := r.predict(ctx, plan)
	if err != nil {
		diags.AddWarning("Planned impact unknown",
			fmt.Sprintf("The impact of this change of EC2NodeClass %s could not be predicted: %v. planned_impact is unknown; the plan is otherwise unaffected.", name, err))
		return types.MapUnknown(plannedImpactType)
	}
	if len(lines) == 0 {
		lines = []string{"no node pool's nodes change."}
	}
	diags.AddWarning("Planned impact", name+": "+strings.Join(lines, "\n"))
	return types.MapValueMust(plannedImpactType, values)
}

func (r *EC2NodeClassResource) predict(ctx context.Context, plan map[string]attr.Value) (map[string]attr.Value, []string, error) {
	values := map[string]attr.Value{}
	planned := &awsv1.EC2NodeClass{}
	if err := r.typed(plan, planned); err != nil {
		return nil, nil, err
	}
	env, err := snapshotForImpact(ctx, r.clients, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	var live *awsv1.EC2NodeClass
	for i := range env.classes {
		if env.classes[i].Name == planned.Name {
			live = &env.classes[i]
		}
	}
	var pools []*v1.NodePool
	for i := range env.cluster.NodePools {
		if ref := env.cluster.NodePools[i].Spec.Template.Spec.NodeClassRef; ref != nil && ref.Name == planned.Name &&
			(ref.Kind == "" || ref.Kind == awsv1.EC2NodeClassKind) {
			pools = append(pools, &env.cluster.NodePools[i])
		}
	}
	if live == nil || len(pools) == 0 {
		return values, nil, nil // no node runs on a class not there yet
	}
	if planned.Status, err = r.plannedStatus(ctx, planned, live); err != nil {
		return nil, nil, err
	}
	cfg, err := r.clients.AWS(ctx)
	if err != nil {
		return nil, nil, err
	}
	its, err := baseInstanceTypes(ctx, cfg, env.st, pools, []awsv1.EC2NodeClass{*planned})
	if err != nil {
		return nil, nil, err
	}
	var lines []string
	for _, p := range pools {
		in := env.input(p)
		in.PlannedBaseTypes = its[p.Name]
		in.NodeClass = &impact.NodeClassChange{Current: live, Planned: planned}
		res := impact.Predict(in)
		values[p.Name] = impactValue(res)
		lines = append(lines, impactSentence(res))
	}
	return values, lines, nil
}

// plannedStatus is the planned class's status: the live one (subnets,
// security groups, ... resolve as they do now), with the AMIs its selector
// terms resolve to when they or the AMI family change, resolved as the
// controller resolves them.
func (r *EC2NodeClassResource) plannedStatus(ctx context.Context, planned, live *awsv1.EC2NodeClass) (awsv1.EC2NodeClassStatus, error) {
	status := *live.Status.DeepCopy()
	if reflect.DeepEqual(planned.Spec.AMISelectorTerms, live.Spec.AMISelectorTerms) && planned.AMIFamily() == live.AMIFamily() {
		return status, nil
	}
	cfg, err := r.clients.AWS(ctx)
	if err != nil {
		return status, err
	}
	version := func(ctx context.Context) (string, error) { return r.clients.kubernetesVersion(ctx) }
	amis, err := ami.New(ec2.NewFromConfig(cfg), ssm.NewFromConfig(cfg), version, time.Minute).List(ctx, planned)
	if err != nil {
		return status, fmt.Errorf("resolving the planned AMI selector terms: %w", err)
	}
	status.AMIs = amis
	return status, nil
}
