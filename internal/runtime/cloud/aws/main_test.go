package aws_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

var (
	sim  *testenv.Sim
	kube *testenv.Kube
	// prov is shared: discovering the catalog and prices takes seconds.
	prov *awsprovider.Provider
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		AWS:      &awssim.Options{ClusterName: cluster, PendingDuration: 50 * time.Millisecond, ShuttingDownDuration: 50 * time.Millisecond},
		NodeRole: true,
		Cloud:    true,
	}, func(env *testenv.Env) error {
		sim, kube, prov = env.Sim, env.Kube, env.Cloud
		return prov.Start(context.Background())
	}))
}

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func settings() awsprovider.Settings { return testenv.CloudSettings(cluster) }

// readyNodeClass creates the node class and resolves its status as the
// node class controller does, failing unless it becomes Ready.
func readyNodeClass(t testing.TB, p *awsprovider.Provider, nc *awsv1.EC2NodeClass) *awsv1.EC2NodeClass {
	t.Helper()
	ctx := testContext(t)
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(context.Background(), nc) })
	resolve(t, p, nc)
	return nc
}

func resolve(t testing.TB, p *awsprovider.Provider, nc *awsv1.EC2NodeClass) {
	t.Helper()
	ctx := testContext(t)
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}
	nodeclass.Resolve(ctx, p, nc)
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	for _, c := range nc.Status.Conditions {
		if c.Type == "Ready" && c.Status != "True" {
			t.Fatalf("EC2NodeClass %s is not Ready: %s", nc.Name, c.Message)
		}
	}
}
