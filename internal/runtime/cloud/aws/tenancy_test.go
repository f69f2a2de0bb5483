package aws_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestDedicatedTenancyIsOffered checks tenancy as Karpenter offers it: every
// type may launch with default or dedicated tenancy, a claim that requires
// dedicated gets a dedicated instance (launch template Placement.Tenancy)
// and the label, and one that allows both gets default.
func TestDedicatedTenancyIsOffered(t *testing.T) {
	ctx := testContext(t)
	nc := readyNodeClass(t, prov, testenv.NodeClass("tenancy", cluster, "al2023@latest"))
	for _, tc := range []struct {
		name    string
		allowed []string
		want    string
	}{
		{"tenancy-dedicated", []string{"dedicated"}, "dedicated"},
		{"tenancy-either", []string{"default", "dedicated"}, "default"},
	} {
		claim := testenv.NodeClaim(tc.name, "general", nc.Name,
			testenv.In(corev1.LabelInstanceTypeStable, "m5.large", "m5.xlarge"),
			testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand),
			testenv.In(v1.LabelInstanceTenancy, tc.allowed...))
		claim.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
		got, err := prov.Create(ctx, claim)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		t.Cleanup(func() { _ = prov.Delete(ctx, got) })
		if got.Labels[v1.LabelInstanceTenancy] != tc.want {
			t.Errorf("%s: label %s=%q, want %q", tc.name, v1.LabelInstanceTenancy, got.Labels[v1.LabelInstanceTenancy], tc.want)
		}
		id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
		out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.Reservations[0].Instances[0].Placement.Tenancy; got != ec2types.Tenancy(tc.want) {
			t.Errorf("%s: instance tenancy %s, want %s", tc.name, got, tc.want)
		}
		// Read back (as after a restart), the claim says the same.
		again, err := prov.Get(ctx, got.Status.ProviderID)
		if err != nil {
			t.Fatal(err)
		}
		if again.Labels[v1.LabelInstanceTenancy] != tc.want {
			t.Errorf("%s: read back with %s=%q", tc.name, v1.LabelInstanceTenancy, again.Labels[v1.LabelInstanceTenancy])
		}
	}
	types, err := prov.GetInstanceTypes(ctx, pool("tenancy", nc.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range types {
		if vs := it.Values(v1.LabelInstanceTenancy); len(vs) != 2 {
			t.Fatalf("%s offers tenancies %v, want default and dedicated", it.Name, vs)
		}
	}
}
