package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// Snapshot is the cluster as the demo shows it: the Joist nodes and their
// instances, what they cost, and the demo's pods.
type Snapshot struct {
	// Nodes are Joist's Ready nodes; Launching the NodeClaims not yet
	// initialized; Disrupting the ones being deleted.
	Nodes, Launching, Disrupting int
	// InstanceTypes and CapacityTypes count the live instances (pending or
	// running in EC2) by type and by spot/on-demand.
	InstanceTypes, CapacityTypes map[string]int
	Instances                    int
	// CostPerHour prices the live instances: spot at the zone's spot price,
	// on-demand at the region's on-demand price.
	CostPerHour float64
	// Pending and Running count the pods of the demo namespace.
	Pending, Running int

	// What the phases wait on: the NodeClaims' names, provider IDs and
	// images, and the live instances' IDs.
	claims, claimProviderIDs, claimImages, instanceIDs []string
}

// Observe takes a snapshot. Instances come from EC2 (DescribeInstances by
// the cluster's tag), nodes and claims from the API server.
func (w *World) Observe(ctx context.Context, cluster, namespace string) (Snapshot, error) {
	s := Snapshot{InstanceTypes: map[string]int{}, CapacityTypes: map[string]int{}}
	insts, err := w.Instances(ctx, cluster)
	if err != nil {
		return s, err
	}
	for _, i := range insts {
		s.Instances++
		s.instanceIDs = append(s.instanceIDs, aws.ToString(i.InstanceId))
		s.InstanceTypes[string(i.InstanceType)]++
		s.CapacityTypes[capacityType(i)]++
		p, err := Price(w.AWS.Region, i)
		if err != nil {
			return s, err
		}
		s.CostPerHour += p
	}
	var claims v1.NodeClaimList
	if err := w.Kube.List(ctx, &claims); err != nil {
		return s, err
	}
	for _, c := range claims.Items {
		s.claims = append(s.claims, c.Name)
		s.claimProviderIDs = append(s.claimProviderIDs, c.Status.ProviderID)
		s.claimImages = append(s.claimImages, c.Status.ImageID)
		switch {
		case c.DeletionTimestamp != nil:
			s.Disrupting++
		case !meta.IsStatusConditionTrue(c.Status.Conditions, v1.ConditionTypeInitialized):
			s.Launching++
		}
	}
	var nodes corev1.NodeList
	if err := w.Kube.List(ctx, &nodes, client.HasLabels{v1.NodePoolLabelKey}); err != nil {
		return s, err
	}
	for i := range nodes.Items {
		if state.IsNodeReady(&nodes.Items[i]) && nodes.Items[i].DeletionTimestamp == nil {
			s.Nodes++
		}
	}
	var pods corev1.PodList
	if err := w.Kube.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return s, err
	}
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Status.Phase == corev1.PodRunning:
			s.Running++
		case p.Status.Phase == corev1.PodPending:
			s.Pending++
		}
	}
	return s, nil
}

// Instances lists the cluster's live (pending or running) instances.
func (w *World) Instances(ctx context.Context, cluster string) ([]ec2types.Instance, error) {
	return w.describeInstances(ctx,
		ec2types.Filter{Name: aws.String("tag:kubernetes.io/cluster/" + cluster), Values: []string{"owned"}},
		ec2types.Filter{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	)
}

// describeInstances pages through DescribeInstances with filters.
func (w *World) describeInstances(ctx context.Context, filters ...ec2types.Filter) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	pager := ec2.NewDescribeInstancesPaginator(ec2.NewFromConfig(w.AWS), &ec2.DescribeInstancesInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("DescribeInstances: %w", err)
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
	}
	return out, nil
}

func capacityType(i ec2types.Instance) string {
	if i.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		return v1.CapacityTypeSpot
	}
	return v1.CapacityTypeOnDemand
}

// Price is what an instance costs per hour in the catalog: the spot price
// of its zone for spot instances, the on-demand price otherwise.
func Price(region string, i ec2types.Instance) (float64, error) {
	cat, err := catalog.Load()
	if err != nil {
		return 0, err
	}
	name := string(i.InstanceType)
	p, ok := cat.OnDemandPrice(region, name)
	if capacityType(i) == v1.CapacityTypeSpot {
		p, ok = cat.SpotPrice(region, aws.ToString(i.Placement.AvailabilityZone), name)
	}
	if !ok {
		return 0, fmt.Errorf("demo: the catalog has no %s price for %s in %s", capacityType(i), name, region)
	}
	return p, nil
}

// NodeReady says whether the node's Ready condition is True.

// counts renders {a:2, b:1} as "a×2 b", largest first.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Collect(maps.Keys(m))
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k
		if m[k] > 1 {
			parts[i] = fmt.Sprintf("%s×%d", k, m[k])
		}
	}
	return strings.Join(parts, " ")
}

// Line is the one-line live view of a snapshot.
func (s Snapshot) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nodes %d", s.Nodes)
	var extra []string
	if s.Launching > 0 {
		extra = append(extra, fmt.Sprintf("%d launching", s.Launching))
	}
	if s.Disrupting > 0 {
		extra = append(extra, fmt.Sprintf("%d disrupting", s.Disrupting))
	}
	if len(extra) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(extra, ", "))
	}
	fmt.Fprintf(&b, " | %s | %s | $%.3f/h | pods %d running, %d pending",
		counts(s.InstanceTypes), counts(s.CapacityTypes), s.CostPerHour, s.Running, s.Pending)
	return b.String()
}
