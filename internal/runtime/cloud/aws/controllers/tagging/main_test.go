package tagging_test

import (
	"context"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/tagging"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

// The manager runs the controller as the operator does; tests that must
// see what one reconcile does call Reconcile themselves.
var (
	sim  *testenv.Sim
	kube *testenv.Kube
	prov *awsprovider.Provider
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		AWS: &awssim.Options{ClusterName: cluster},
		Controllers: func(_ context.Context, mgr manager.Manager, env *testenv.Env) error {
			return tagging.NewController(mgr.GetClient(), env.Cloud, events.NewRecorder(mgr.GetEventRecorder("karpenter"))).Register(mgr)
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
