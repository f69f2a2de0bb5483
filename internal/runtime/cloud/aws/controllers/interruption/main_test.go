package interruption_test

import (
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// kube reaches a real apiserver with the CRDs; sim is the local AWS every
// test shares.
var (
	kube    client.Client
	sim     *awssim.Server
	scheme  *kruntime.Scheme
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		// Instances stay shutting-down for the whole run, so a test sees
		// only the state changes it caused.
		AWS: &awssim.Options{ClusterName: "demo", Logger: logr.Discard(), ShuttingDownDuration: time.Minute},
	}, func(env *testenv.Env) error {
		kube, scheme, restCfg = env.Kube.Client, env.Kube.Scheme, env.Kube.Config
		sim = env.Sim.Server
		return nil
	}))
}
