package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// destroy deletes the pool and its NodeClaims and waits until the claims
// are gone. Draining and terminating them is the controller's work; with no
// controller running it fails at once, unless force, which terminates the
// pool's instances itself and drops the claims' finalizers.
func (r *NodePoolResource) destroy(ctx context.Context, name string, force bool, timeout time.Duration) error {
	kube, err := r.clients.Kubernetes(ctx)
	if err != nil {
		return err
	}
	claims, err := poolClaims(ctx, kube, name)
	if err != nil {
		return err
	}
	if len(claims) > 0 {
		running, why, err := controllerRunning(ctx, kube, time.Now())
		if err != nil {
			return err
		}
		if !running {
			if !force {
				return fmt.Errorf("node pool %s has %d NodeClaims (%s) and no controller is running to drain and terminate them: %s. "+
					"Install or start the controller (joist_controller) and destroy again, or set force_destroy = true "+
					"to terminate the pool's EC2 instances directly and remove the NodeClaims' finalizers (pods are not drained)",
					name, len(claims), claimNames(claims), why)
			}
			tflog.Warn(ctx, "no controller running; terminating the pool's instances directly", map[string]any{"nodepool": name, "reason": why, "nodeclaims": len(claims)})
			if err := r.forceCleanup(ctx, kube, name, claims); err != nil {
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
	return r.waitForClaims(ctx, kube, name, force, timeout)
}

// waitForClaims waits until no NodeClaim of the pool is left, logging
// progress, and gives up early when the controller goes away.
func (r *NodePoolResource) waitForClaims(ctx context.Context, kube dynamic.Interface, name string, force bool, timeout time.Duration) error {
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
		waited := time.Since(start)
		tflog.Info(ctx, "waiting for the node pool's NodeClaims to terminate", map[string]any{
			"nodepool": name, "remaining": len(claims), "waited": waited.Round(time.Second).String(),
		})
		if running, why, err := controllerRunning(ctx, kube, time.Now()); err == nil && !running {
			if !force {
				return fmt.Errorf("node pool %s: %d NodeClaims (%s) remain and the controller stopped: %s; start it again, or set force_destroy = true",
					name, len(claims), claimNames(claims), why)
			}
			if err := r.forceCleanup(ctx, kube, name, claims); err != nil {
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

// forceCleanup does the controller's termination work without draining:
// terminate every instance of the pool, then release and delete its claims.
func (r *NodePoolResource) forceCleanup(ctx context.Context, kube dynamic.Interface, name string, claims []unstructured.Unstructured) error {
	if err := r.terminateInstances(ctx, name, claims); err != nil {
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

// errNoClusterForForce is why a forced destroy cannot run: without the
// cluster's name the pool's tag alone would match another cluster's pool of
// the same name in the account.
func errNoClusterForForce(pool string) error {
	return fmt.Errorf("node pool %s: force_destroy terminates EC2 instances, and only those tagged "+
		"kubernetes.io/cluster/<cluster> = owned may be touched; set cluster_name in the provider block "+
		"(the EKS cluster's name), or set force_destroy = false and let the controller drain the pool", pool)
}

// terminateInstances terminates the pool's instances in this cluster: those
// tagged for the pool and the cluster, and those the claims name in their
// providerID when they carry the same two tags. An instance that is not
// provably this cluster's pool's is left alone, whatever a claim says.
func (r *NodePoolResource) terminateInstances(ctx context.Context, name string, claims []unstructured.Unstructured) error {
	cluster := r.clients.clusterName
	if cluster == "" {
		return errNoClusterForForce(name)
	}
	cfg, err := r.clients.AWS(ctx)
	if err != nil {
		return fmt.Errorf("force_destroy needs AWS access to terminate the instances of node pool %s: %w", name, err)
	}
	client := ec2.NewFromConfig(cfg)
	filters := poolInstanceFilters(cluster, name)
	ids := map[string]bool{}
	collect := func(in *ec2.DescribeInstancesInput) error {
		pages := ec2.NewDescribeInstancesPaginator(client, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return fmt.Errorf("listing the instances of node pool %s: %w", name, err)
			}
			for _, res := range page.Reservations {
				for _, inst := range res.Instances {
					ids[aws.ToString(inst.InstanceId)] = true
				}
			}
		}
		return nil
	}
	if err := collect(&ec2.DescribeInstancesInput{Filters: filters}); err != nil {
		return err
	}
	// Claims whose instance the listing missed (EC2's eventual consistency)
	// are described by ID, under the same filters.
	var named []string
	for _, c := range claims {
		providerID, _, _ := unstructured.NestedString(c.Object, "status", "providerID")
		if i := strings.LastIndex(providerID, "/"); i >= 0 && strings.HasPrefix(providerID[i+1:], "i-") && !ids[providerID[i+1:]] {
			named = append(named, providerID[i+1:])
		}
	}
	if len(named) > 0 {
		err := collect(&ec2.DescribeInstancesInput{InstanceIds: named, Filters: filters})
		if err != nil && !isAWSCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed") {
			return err
		}
	}
	if len(ids) == 0 {
		return nil
	}
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	sort.Strings(list)
	tflog.Warn(ctx, "terminating instances", map[string]any{"nodepool": name, "cluster": cluster, "instances": list})
	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: list}); err != nil {
		return fmt.Errorf("terminating the instances of node pool %s (%s): %w", name, strings.Join(list, ", "), err)
	}
	return nil
}

// poolInstanceFilters select the live instances of one pool of one cluster:
// both tags, as the controller writes them at launch.
func poolInstanceFilters(cluster, pool string) []ec2types.Filter {
	return []ec2types.Filter{
		{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
		{Name: aws.String("tag:kubernetes.io/cluster/" + cluster), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
	}
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
