package interruption_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// kube reaches a real apiserver with the CRDs; sim is the local AWS every
// test shares.
var (
	kube    client.Client
	sim     *awssim.Server
	scheme  *kruntime.Scheme
	restCfg *rest.Config
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, err := sandbox.FindBinDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defs, err := crds.CRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	env := &envtest.Environment{BinaryAssetsDirectory: bin, CRDs: defs, ControlPlaneStartTimeout: 2 * time.Minute}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the apiserver:", err)
		return 1
	}
	defer func() { _ = env.Stop() }()
	restCfg = cfg
	scheme = kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if kube, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Instances stay shutting-down for the whole run, so a test sees only
	// the state changes it caused.
	if sim, err = awssim.Start(ctx, awssim.Options{ClusterName: "demo", Logger: logr.Discard(), ShuttingDownDuration: time.Minute}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
