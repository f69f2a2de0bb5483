package provider

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/impact"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

var (
	nodesGVR       = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	podsGVR        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	namespacesGVR  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	limitRangesGVR = schema.GroupVersionResource{Version: "v1", Resource: "limitranges"}
	daemonSetsGVR  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
)

// listAs lists every object of gvr, typed as T.
func listAs[T any](ctx context.Context, kube dynamic.Interface, gvr schema.GroupVersionResource) ([]T, error) {
	list, err := kube.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	out := make([]T, len(list.Items))
	for i := range list.Items {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, &out[i]); err != nil {
			return nil, fmt.Errorf("reading %s %s: %w", gvr.Resource, list.Items[i].GetName(), err)
		}
	}
	return out, nil
}

// clusterSnapshot lists what the prediction reads, in the controller's
// order: nodes and claims first, pods last, so a pod that binds meanwhile
// shows up bound rather than pending.
func clusterSnapshot(ctx context.Context, kube dynamic.Interface) (impact.Cluster, []awsv1.EC2NodeClass, error) {
	var c impact.Cluster
	var err error
	if c.Nodes, err = listAs[corev1.Node](ctx, kube, nodesGVR); err != nil {
		return c, nil, err
	}
	if c.NodeClaims, err = listAs[v1.NodeClaim](ctx, kube, nodeClaimGVR); err != nil {
		return c, nil, err
	}
	if c.NodePools, err = listAs[v1.NodePool](ctx, kube, nodePoolKind().gvr()); err != nil {
		return c, nil, err
	}
	classes, err := listAs[awsv1.EC2NodeClass](ctx, kube, ec2NodeClassKind().gvr())
	if err != nil {
		return c, nil, err
	}
	if c.NodeOverlays, err = listAs[v1alpha1.NodeOverlay](ctx, kube, nodeOverlayKind().gvr()); err != nil {
		return c, nil, err
	}
	if c.DaemonSets, err = listAs[appsv1.DaemonSet](ctx, kube, daemonSetsGVR); err != nil {
		return c, nil, err
	}
	if c.Namespaces, err = listAs[corev1.Namespace](ctx, kube, namespacesGVR); err != nil {
		return c, nil, err
	}
	if c.LimitRanges, err = listAs[corev1.LimitRange](ctx, kube, limitRangesGVR); err != nil {
		return c, nil, err
	}
	if c.Pods, err = listAs[corev1.Pod](ctx, kube, podsGVR); err != nil {
		return c, nil, err
	}
	return c, classes, nil
}

// baseInstanceTypes lists each pool's instance types before NodeOverlays
// with the controller's builder (instancetype.List over the node class's
// resolved zones and AMIs), priced as the controller prices offerings. A
// pool whose EC2NodeClass is missing or unresolved has none, as for the
// controller, which launches nothing for it.
func baseInstanceTypes(ctx context.Context, cfg aws.Config, st *settings.Settings, pools []*v1.NodePool, classes []awsv1.EC2NodeClass) (impact.InstanceTypes, error) {
	catalog := instancetype.NewFromConfigWith(cfg, instancetype.Options{VMMemoryOverheadPercent: st.VMMemoryOverheadPercent, ReservedENIs: st.ReservedENIs})
	prices := catalog.Prices()
	if st.IsolatedVPC {
		tflog.Info(ctx, "isolated VPC: on-demand prices from the embedded table, as the controller")
	} else if err := prices.UpdateOnDemandPricing(ctx); err != nil {
		tflog.Warn(ctx, "on-demand prices from the Pricing API unavailable; using the embedded table", map[string]any{"error": err.Error()})
	}
	if err := prices.UpdateSpotPricing(ctx); err != nil {
		tflog.Warn(ctx, "spot prices unavailable", map[string]any{"error": err.Error()})
	}
	byName := map[string]*awsv1.EC2NodeClass{}
	for i := range classes {
		byName[classes[i].Name] = &classes[i]
	}
	out := impact.InstanceTypes{}
	for _, p := range pools {
		ref := p.Spec.Template.Spec.NodeClassRef
		if ref == nil || (ref.Kind != "" && ref.Kind != awsv1.EC2NodeClassKind) {
			continue
		}
		nc, ok := byName[ref.Name]
		if !ok {
			continue
		}
		zones, _ := instancetype.Zones(nc)
		its, err := catalog.List(ctx, nc, zones)
		if err != nil {
			return nil, fmt.Errorf("instance types of EC2NodeClass %s: %w", nc.Name, err)
		}
		out[p.Name] = its
	}
	return out, nil
}

// deployedSettings are the settings of the Joist controller deployed in the
// cluster, read by the controller's own parser (defaults where a setting is
// unset, or when no controller is deployed): which NodeOverlays apply, the
// solver's policies and the capacity options the prediction must share.
func deployedSettings(ctx context.Context, kube dynamic.Interface) (*settings.Settings, error) {
	list, err := kube.Resource(deploymentsGVR).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + controllerdeploy.Name})
	if err != nil {
		return nil, fmt.Errorf("listing Deployments: %w", err)
	}
	env := map[string]string{}
	for i := range list.Items {
		if e, err := controllerdeploy.Env(&list.Items[i]); err == nil && list.Items[i].GetDeletionTimestamp() == nil {
			env = e
			break
		}
	}
	// Parsing goes on past invalid values (the controller would refuse
	// them at start): the others still say what it would do.
	st, _ := settings.ParseSettings(nil, func(k string) string { return env[k] })
	if st == nil {
		st, _ = settings.ParseSettings(nil, func(string) string { return "" })
	}
	return st, nil
}

// impactEnv is one snapshot of the cluster for predictions: the objects,
// each pool's instance types before NodeOverlays, and the controller's
// settings.
type impactEnv struct {
	cluster impact.Cluster
	base    impact.InstanceTypes
	st      *settings.Settings
	classes []awsv1.EC2NodeClass
}

// snapshotForImpact gathers an impactEnv. planned, when not nil, is a pool
// the plan writes (its instance types are listed too); current, when not
// nil, stands for the live pool of its name (see replaceCurrent).
func snapshotForImpact(ctx context.Context, c *clients, planned, current *v1.NodePool) (*impactEnv, error) {
	kube, err := c.Kubernetes(ctx)
	if err != nil {
		return nil, err
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cluster, classes, err := clusterSnapshot(ctx, kube)
	if err != nil {
		return nil, err
	}
	// The prediction starts from the pool as applied: the state's, when
	// the live object is gone or differs.
	if current != nil {
		replaceCurrent(&cluster, current)
	}
	var pools []*v1.NodePool
	if planned != nil {
		pools = append(pools, planned)
	}
	for i := range cluster.NodePools {
		pools = append(pools, &cluster.NodePools[i])
	}
	st, err := deployedSettings(ctx, kube)
	if err != nil {
		return nil, err
	}
	base, err := baseInstanceTypes(ctx, cfg, st, pools, classes)
	if err != nil {
		return nil, err
	}
	return &impactEnv{cluster: cluster, base: base, st: st, classes: classes}, nil
}

// input is the prediction's input for planned over the snapshot.
func (e *impactEnv) input(planned *v1.NodePool) impact.Input {
	return impact.Input{Cluster: e.cluster, Planned: planned, BaseTypes: e.base, Now: time.Now(),
		Overlays: e.st.FeatureGates["NodeOverlay"], PreferencePolicy: e.st.PreferencePolicy, MinValuesPolicy: e.st.MinValuesPolicy}
}

// replaceCurrent puts current in place of the live pool of its name,
// keeping the live status (readiness), or adds it when the cluster has
// none: its nodes were made from it either way.
func replaceCurrent(c *impact.Cluster, current *v1.NodePool) {
	for i := range c.NodePools {
		if c.NodePools[i].Name == current.Name {
			status := c.NodePools[i].Status
			c.NodePools[i] = *current.DeepCopy()
			c.NodePools[i].Status = status
			return
		}
	}
	c.NodePools = append(c.NodePools, *current.DeepCopy())
}
