package instancetype_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// BenchmarkListAfterCapacityError measures recomputing every type's
// capacity and offerings, which happens after each change to the
// unavailable-offerings cache (the catalog itself is fetched once).
func BenchmarkListAfterCapacityError(b *testing.B) {
	sim, client, prices := simulated(b)
	ctx := context.Background()
	if err := prices.UpdateSpotPricing(ctx); err != nil {
		b.Fatal(err)
	}
	unavailable := cache.NewUnavailableOfferings()
	p := instancetype.New(client, prices, unavailable, instancetype.Options{Region: sim.Config.Region})
	if err := p.Refresh(ctx); err != nil {
		b.Fatal(err)
	}
	nc := nodeClass("bench", "amd64", "arm64")
	var zones []string
	for _, z := range sim.EC2.Region().Zones {
		zones = append(zones, z.Name)
	}
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		unavailable.MarkUnavailable("m5.large", zones[i%len(zones)], "spot")
		its, err := p.List(ctx, nc, zones)
		if err != nil {
			b.Fatal(err)
		}
		n = len(its)
	}
	b.ReportMetric(float64(n), "types")
}

// simulated starts the simulated EC2 and returns it with a client and a
// pricing provider on it.
func simulated(tb testing.TB) (*testenv.Sim, *ec2.Client, *pricing.Provider) {
	tb.Helper()
	sim, err := testenv.Start(awssim.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(sim.Close)
	client := ec2.NewFromConfig(sim.Config)
	return sim, client, pricing.New(client, nil, sim.Config.Region)
}

// nodeClass is a resolved node class with an AMI for each architecture.
func nodeClass(name string, arches ...string) *awsv1.EC2NodeClass {
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	for _, arch := range arches {
		nc.Status.AMIs = append(nc.Status.AMIs, awsv1.AMI{ID: "ami-" + arch, Requirements: []corev1.NodeSelectorRequirement{
			{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}}})
	}
	return nc
}
