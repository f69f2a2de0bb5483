package nodeclass_test

import (
	"context"
	"os"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

var (
	sim  *testenv.Sim
	kube *testenv.Kube
	prov *awsprovider.Provider
	// clk dates IAM denials; tests step it past DenialGrace.
	clk = clocktesting.NewFakeClock(time.Now())
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		AWS:      &awssim.Options{ClusterName: cluster, ShuttingDownDuration: 50 * time.Millisecond},
		NodeRole: true,
		Controllers: func(_ context.Context, mgr manager.Manager, env *testenv.Env) error {
			return nodeclass.NewController(mgr.GetClient(), env.Cloud, events.NewRecorder(mgr.GetEventRecorder("karpenter")), clk).Register(mgr)
		},
	}, func(env *testenv.Env) error {
		sim, kube, prov = env.Sim, env.Kube, env.Cloud
		return nil
	}))
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
