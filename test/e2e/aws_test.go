package e2e

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

// instances lists the cluster's live instances through the EC2 API, by
// providerID; pool narrows them to one NodePool's tag.
func instances(t *testing.T, pool string) map[string]ec2types.Instance {
	t.Helper()
	filters := []ec2types.Filter{
		{Name: aws.String("tag:kubernetes.io/cluster/" + clusterName), Values: []string{"owned"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}},
	}
	if pool != "" {
		filters = append(filters, ec2types.Filter{Name: aws.String("tag:karpenter.sh/nodepool"), Values: []string{pool}})
	}
	out := map[string]ec2types.Instance{}
	pager := ec2.NewDescribeInstancesPaginator(ec2.NewFromConfig(worldOf(t).sim.AWSConfig()), &ec2.DescribeInstancesInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("DescribeInstances: %v", err)
		}
		for _, r := range page.Reservations {
			for _, i := range r.Instances {
				out["aws:///"+aws.ToString(i.Placement.AvailabilityZone)+"/"+aws.ToString(i.InstanceId)] = i
			}
		}
	}
	return out
}

func tagsOf(i ec2types.Instance) map[string]string {
	out := map[string]string{}
	for _, t := range i.Tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// region is the simulated region.
func region(t testing.TB) catalog.Region { return worldOf(t).sim.EC2.Region() }

// spotLowerBound is the least any packing could pay per pod needing cpu
// vCPUs and memGiB: over the catalog's types of the given categories and
// architecture, the cheapest spot price in any zone divided by the pods the
// bare machine could hold, ignoring every overhead.
func spotLowerBound(t *testing.T, categories []string, arch string, cpu, memGiB float64) (float64, string) {
	t.Helper()
	cat := catalogLoad()
	r := region(t)
	best, bestType := 0.0, ""
	for _, info := range cat.InstanceTypes() {
		name := string(info.InstanceType)
		labels := instancetype.Labels(info, r.Name, "linux")
		if !contains(categories, labels["karpenter.k8s.aws/instance-category"]) || instancetype.Arch(info) != arch {
			continue
		}
		if info.VCpuInfo == nil || info.MemoryInfo == nil {
			continue
		}
		vcpu := float64(aws.ToInt32(info.VCpuInfo.DefaultVCpus))
		mem := float64(aws.ToInt64(info.MemoryInfo.SizeInMiB)) / 1024
		fit := min(int(vcpu/cpu), int(mem/memGiB))
		if fit < 1 {
			continue
		}
		for _, z := range r.Zones {
			if !cat.Offered(r.Name, z.Name, name) {
				continue
			}
			if p, ok := cat.SpotPrice(r.Name, z.Name, name); ok && p > 0 {
				if per := p / float64(fit); best == 0 || per < best {
					best, bestType = per, name
				}
			}
		}
	}
	if best == 0 {
		t.Fatalf("no %v %s type in the catalog has a spot price", categories, arch)
	}
	return best, bestType
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// familyTypes lists the catalog's instance types of the given families.
func familyTypes(families ...string) []string {
	var out []string
	for _, info := range catalogLoad().InstanceTypes() {
		name := string(info.InstanceType)
		if fam, _, ok := strings.Cut(name, "."); ok && contains(families, fam) {
			out = append(out, name)
		}
	}
	return out
}

// catalogLoad is the simulator's catalog, loaded once for all scenarios.
var catalogLoad = sync.OnceValue(catalog.MustLoad)
