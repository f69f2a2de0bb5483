package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
)

// destroy deletes the pool and its NodeClaims and waits until the claims
// are gone. Draining and terminating them is the controller's work; with no
// controller running it fails, unless force, which terminates the pool's
// instances itself and drops the claims' finalizers. Instances a forced
// destroy leaves running are reported in a warning.
func (r *NodePoolResource) destroy(ctx context.Context, name string, force bool, timeout time.Duration, diags *diag.Diagnostics) error {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return err
	}
	claims, err := poolClaims(ctx, kube, name)
	if err != nil {
		return err
	}
	f := &forcedDestroy{pool: name, claims: map[string]string{}, spared: map[string]string{}}
	f.see(claims)
	defer f.warn(diags)
	if len(claims) > 0 {
		gone, why, err := controllerGone(ctx, kube, time.Second, leaseProgress(ctx, name))
		if err != nil {
			return err
		}
		if gone {
			if !force {
				return fmt.Errorf("node pool %s has %d NodeClaims (%s) and no controller is running to drain and terminate them: %s. "+
					"Install or start the controller (joist_controller) and destroy again, or set force_destroy = true "+
					"to terminate the pool's EC2 instances directly and remove the NodeClaims' finalizers (pods are not drained)",
					name, len(claims), claimNames(claims), why)
			}
			tflog.Warn(ctx, "no controller running; terminating the pool's instances directly", map[string]any{"nodepool": name, "reason": why, "nodeclaims": len(claims)})
			if err := r.forceCleanup(ctx, kube, f, claims); err != nil {
				return err
			}
		}
	}
	if err := r.deleteObject(ctx, name, timeout, nil); err != nil {
		return err
	}
	if err := kube.Resource(nodeClaimGVR).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: v1.NodePoolLabelKey + "=" + name}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting the NodeClaims of node pool %s: %w", name, err)
	}
	return r.waitForClaims(ctx, kube, f, force, timeout)
}

// leaseProgress logs the wait for a controller to show up in its Lease.
func leaseProgress(ctx context.Context, pool string) func(leaseSighting) {
	return func(s leaseSighting) {
		if s.Running {
			return
		}
		tflog.Info(ctx, "no controller holds the leader Lease; watching it for one lease duration before treating the controller as gone", map[string]any{
			"nodepool": pool, "lease": s.Why, "waited": s.Waited.Round(time.Second).String(), "window": s.Window.String(),
		})
	}
}

// waitForClaims waits until no NodeClaim of the pool is left, logging
// progress, and gives up early when the controller goes away.
func (r *NodePoolResource) waitForClaims(ctx context.Context, kube dynamic.Interface, f *forcedDestroy, force bool, timeout time.Duration) error {
	name := f.pool
	start := time.Now()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		claims, err := poolClaims(ctx, kube, name)
		if err != nil {
			return err
		}
		if len(claims) == 0 {
			return nil
		}
		f.see(claims)
		waited := time.Since(start)
		tflog.Info(ctx, "waiting for the node pool's NodeClaims to terminate", map[string]any{
			"nodepool": name, "remaining": len(claims), "waited": waited.Round(time.Second).String(),
		})
		if gone, why, err := controllerGone(ctx, kube, time.Second, leaseProgress(ctx, name)); err == nil && gone {
			if !force {
				return fmt.Errorf("node pool %s: %d NodeClaims (%s) remain and the controller stopped: %s; start it again, or set force_destroy = true",
					name, len(claims), claimNames(claims), why)
			}
			if err := r.forceCleanup(ctx, kube, f, claims); err != nil {
				return err
			}
		}
		if waited > timeout {
			return fmt.Errorf("node pool %s: %d NodeClaims (%s) still terminating after %s; raise delete_timeout or look at the controller's logs",
				name, len(claims), claimNames(claims), timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// forcedDestroy is what one destroy of a pool learned: every NodeClaim of
// the pool it listed through the Kubernetes connection (by name, with the
// instance ID its providerID names, "" before launch), and the instances
// it left running, with why.
type forcedDestroy struct {
	pool   string
	claims map[string]string
	spared map[string]string
}

// see records claims of the pool listed through the Kubernetes connection;
// a claim stays known after it is gone, since its instance may outlive it.
func (f *forcedDestroy) see(claims []unstructured.Unstructured) {
	for _, c := range claims {
		if id := instanceIDOf(&c); id != "" || f.claims[c.GetName()] == "" {
			f.claims[c.GetName()] = id
		}
	}
}

// warn reports the instances left running.
func (f *forcedDestroy) warn(diags *diag.Diagnostics) {
	if len(f.spared) == 0 {
		return
	}
	lines := make([]string, 0, len(f.spared))
	for _, id := range slices.Sorted(maps.Keys(f.spared)) {
		lines = append(lines, id+": "+f.spared[id])
	}
	diags.AddWarning(fmt.Sprintf("Instances of node pool %s left running", f.pool),
		"force_destroy terminates only instances a NodeClaim of the pool in this cluster names. These were left running; "+
			"terminate them yourself once you know whose they are:\n"+strings.Join(lines, "\n"))
}

// forceCleanup does the controller's termination work without draining:
// terminate the pool's instances, then release and delete its claims.
func (r *NodePoolResource) forceCleanup(ctx context.Context, kube dynamic.Interface, f *forcedDestroy, claims []unstructured.Unstructured) error {
	f.see(claims)
	if err := r.terminateInstances(ctx, kube, f); err != nil {
		return err
	}
	for _, c := range claims {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := kube.Resource(nodeClaimGVR).Patch(ctx, c.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: FieldManager}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("removing the finalizers of NodeClaim %s: %w", c.GetName(), err)
		}
		if err := kube.Resource(nodeClaimGVR).Delete(ctx, c.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting NodeClaim %s: %w", c.GetName(), err)
		}
	}
	return nil
}

// instanceIDOf is the EC2 instance ID in a claim's providerID, "" when it
// names none (aws:///<zone>/<id>).
func instanceIDOf(claim *unstructured.Unstructured) string {
	providerID, _, _ := unstructured.NestedString(claim.Object, "status", "providerID")
	if i := strings.LastIndex(providerID, "/"); i >= 0 && strings.HasPrefix(providerID[i+1:], "i-") {
		return providerID[i+1:]
	}
	return ""
}

// errNoClusterForForce is why a forced destroy cannot run: without the
// cluster's name the pool's tag alone would match another cluster's pool of
// the same name in the account.
func errNoClusterForForce(pool string) error {
	return fmt.Errorf("node pool %s: force_destroy terminates EC2 instances, and only those tagged "+
		"kubernetes.io/cluster/<cluster> = owned may be touched; set cluster_name in the provider block "+
		"(the EKS cluster's name), or set force_destroy = false and let the controller drain the pool", pool)
}

// terminateInstances terminates the instances of the pool that are
// provably this cluster's, once cluster_name is proven to be the cluster
// the Kubernetes connection reaches. It looks at the instances tagged for
// the pool in the cluster and those the claims name in their providerID;
// forcedTargets picks which to terminate.
func (r *NodePoolResource) terminateInstances(ctx context.Context, kube dynamic.Interface, f *forcedDestroy) error {
	name, cluster := f.pool, r.clients.clusterName
	if cluster == "" {
		return errNoClusterForForce(name)
	}
	if err := r.clients.proveCluster(ctx, kube, cluster); err != nil {
		return fmt.Errorf("node pool %s: %w", name, err)
	}
	cfg, err := r.clients.AWS(ctx)
	if err != nil {
		return fmt.Errorf("force_destroy needs AWS access to terminate the instances of node pool %s: %w", name, err)
	}
	client := ec2.NewFromConfig(cfg)
	found := map[string]ec2types.Instance{}
	collect := func(in *ec2.DescribeInstancesInput) error {
		pages := ec2.NewDescribeInstancesPaginator(client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("listing the instances of node pool %s: %w", name, err)
			}
			for _, res := range page.Reservations {
				for _, inst := range res.Instances {
					found[aws.ToString(inst.InstanceId)] = inst
				}
			}
		}
		return nil
	}
	if err := collect(&ec2.DescribeInstancesInput{Filters: poolInstanceFilters(cluster, name)}); err != nil {
		return err
	}
	// Instances the claims name that the listing missed (EC2's eventual
	// consistency, or tags that are not this cluster's) are described by
	// ID, so forcedTargets can say why it spares them.
	var named []string
	for _, id := range f.claims {
		if _, ok := found[id]; id != "" && !ok {
			named = append(named, id)
		}
	}
	if len(named) > 0 {
		sort.Strings(named)
		err := collect(&ec2.DescribeInstancesInput{InstanceIds: named, Filters: poolInstanceFilters("", "")})
		if err != nil && !isAWSCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed") {
			return err
		}
	}
	list, spared := forcedTargets(cluster, name, f.claims, slices.Collect(maps.Values(found)))
	maps.Copy(f.spared, spared)
	if len(list) == 0 {
		return nil
	}
	tflog.Warn(ctx, "terminating instances", map[string]any{"nodepool": name, "cluster": cluster, "instances": list})
	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: list}); err != nil {
		return fmt.Errorf("terminating the instances of node pool %s (%s): %w", name, strings.Join(list, ", "), err)
	}
	for _, id := range list {
		delete(f.spared, id)
	}
	return nil
}

// forcedTargets picks the instances a forced destroy of pool terminates:
// those a NodeClaim of the pool names, by its providerID or by the
// instance's NodeClaim tag (claims maps every claim listed through the
// Kubernetes connection to its instance ID), and that carry the cluster's
// and the pool's tags as every launch writes them. The rest are spared,
// with why, sorted.
func forcedTargets(cluster, pool string, claims map[string]string, instances []ec2types.Instance) (terminate []string, spared map[string]string) {
	byID := map[string]string{}
	for claim, id := range claims {
		if id != "" {
			byID[id] = claim
		}
	}
	spared = map[string]string{}
	for _, inst := range instances {
		id, tags := aws.ToString(inst.InstanceId), instanceTags(inst)
		claim, ok := byID[id]
		if !ok {
			if _, listed := claims[tags[ownership.NodeClaimTag]]; listed {
				claim, ok = tags[ownership.NodeClaimTag], true
			}
		}
		if !ok {
			spared[id] = fmt.Sprintf("tagged for node pool %s in cluster %s, but no NodeClaim of the pool in this cluster names it (%s tag %q)",
				pool, cluster, ownership.NodeClaimTag, tags[ownership.NodeClaimTag])
			continue
		}
		if err := ownership.Check(tags, cluster, map[string]string{v1.NodePoolLabelKey: pool}); err != nil {
			spared[id] = fmt.Sprintf("NodeClaim %s names it, but %v", claim, err)
			continue
		}
		terminate = append(terminate, id)
	}
	sort.Strings(terminate)
	return terminate, spared
}

func instanceTags(inst ec2types.Instance) map[string]string {
	tags := make(map[string]string, len(inst.Tags))
	for _, t := range inst.Tags {
		tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return tags
}

// poolInstanceFilters select the live instances of one pool of one cluster
// by the tags the controller writes at launch; the live ones of any pool
// when both are "".
func poolInstanceFilters(cluster, pool string) []ec2types.Filter {
	filters := []ec2types.Filter{{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}}}
	if pool == "" {
		return filters
	}
	return append(filters,
		ec2types.Filter{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
		ec2types.Filter{Name: aws.String("tag:" + ownership.ClusterTag(cluster)), Values: []string{"owned"}},
	)
}

func poolClaims(ctx context.Context, kube dynamic.Interface, pool string) ([]unstructured.Unstructured, error) {
	list, err := kube.Resource(nodeClaimGVR).List(ctx, metav1.ListOptions{LabelSelector: v1.NodePoolLabelKey + "=" + pool})
	if err != nil {
		return nil, fmt.Errorf("listing the NodeClaims of node pool %s: %w", pool, err)
	}
	return list.Items, nil
}

func claimNames(claims []unstructured.Unstructured) string {
	names := make([]string, 0, 3)
	for i, c := range claims {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(claims)-3))
			break
		}
		names = append(names, c.GetName())
	}
	return strings.Join(names, ", ")
}
