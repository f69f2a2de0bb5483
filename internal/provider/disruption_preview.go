package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
)

var plannedDisruptionType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"drifted_nodes":   types.Int64Type,
	"total_nodes":     types.Int64Type,
	"allowed_at_once": types.Int64Type,
}}

func plannedDisruptionAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		Computed: true,
		MarkdownDescription: "What the planned change does to the pool's existing nodes, computed at plan time " +
			"when the cluster is reachable (null otherwise, and on create).",
		Attributes: map[string]schema.Attribute{
			"drifted_nodes": schema.Int64Attribute{Computed: true, MarkdownDescription: "NodeClaims the change drifts: " +
				"all of them when the template's static fields change (labels, annotations, taints, nodeClassRef, " +
				"expireAfter, terminationGracePeriod), else the launched ones whose labels no longer meet the requirements " +
				"(a required label a node does not carry is not met)."},
			"total_nodes":     schema.Int64Attribute{Computed: true, MarkdownDescription: "NodeClaims of the pool."},
			"allowed_at_once": schema.Int64Attribute{Computed: true, MarkdownDescription: "How many nodes the pool's disruption budgets let be replaced for drift at once, now."},
		},
	}
}

// disruptionPreview is what a NodePool change does to its NodeClaims.
type disruptionPreview struct {
	Pool                          string
	Drifted, Total, AllowedAtOnce int
	// Holds keep the drifted nodes in place after the change.
	Holds []impact.Hold
}

func (p *disruptionPreview) value() basetypes.ObjectValue {
	return types.ObjectValueMust(plannedDisruptionType.AttrTypes, map[string]attr.Value{
		"drifted_nodes":   types.Int64Value(int64(p.Drifted)),
		"total_nodes":     types.Int64Value(int64(p.Total)),
		"allowed_at_once": types.Int64Value(int64(p.AllowedAtOnce)),
	})
}

func (p *disruptionPreview) String() string {
	if len(p.Holds) > 0 {
		return fmt.Sprintf("this change drifts %d of %d nodes of node pool %s; none is replaced while %s",
			p.Drifted, p.Total, p.Pool, impact.HoldsText(p.Holds))
	}
	return fmt.Sprintf("this change drifts %d of %d nodes of node pool %s; budgets allow %d at a time",
		p.Drifted, p.Total, p.Pool, p.AllowedAtOnce)
}

// previewDisruption lists the pool's NodeClaims and decides which of them
// the planned spec drifts, the way the controller's drift check will.
func (r *NodePoolResource) previewDisruption(ctx context.Context, plan, state map[string]attr.Value) (*disruptionPreview, error) {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	planned, err := r.typedNodePool(plan)
	if err != nil {
		return nil, err
	}
	current, err := r.typedNodePool(state)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	claims, err := kube.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{LabelSelector: v1.NodePoolLabelKey + "=" + planned.Name})
	if err != nil {
		return nil, err
	}
	p := &disruptionPreview{Pool: planned.Name, Total: len(claims.Items)}
	for _, u := range claims.Items {
		claim := &v1.NodeClaim{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, claim); err != nil {
			return nil, fmt.Errorf("reading NodeClaim %s: %w", u.GetName(), err)
		}
		if impact.PlannedDrift(claim, planned, current) != "" {
			p.Drifted++
		}
	}
	allowed, err := planned.AllowedDisruptionsByReason(time.Now(), p.Total, v1.DisruptionReasonDrifted)
	if err != nil {
		return nil, err
	}
	p.AllowedAtOnce = min(allowed, p.Total)
	return p, nil
}

// typedNodePool is the NodePool the attributes describe, with the CRD
// defaults applied as the apiserver would store it.
func (r *NodePoolResource) typedNodePool(attrs map[string]attr.Value) (*v1.NodePool, error) {
	np := &v1.NodePool{}
	return np, r.typed(attrs, np)
}

// typed decodes the object the attributes describe into out, with the
// CRD defaults applied as the apiserver would store it.
func (r *manifestResource) typed(attrs map[string]attr.Value, out any) error {
	v, err := apiValidator()
	if err != nil {
		return err
	}
	obj, _ := r.manifest(attrs)
	obj, err = v.Default(obj)
	if err != nil {
		return err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("reading the planned %s: %w", r.kind.gvk.Kind, err)
	}
	return nil
}
