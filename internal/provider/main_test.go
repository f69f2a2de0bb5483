package provider

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// testCluster is the sandbox every acceptance test of the package shares,
// with the Joist CRDs installed and no controller running.
var testCluster struct {
	kubeconfig string
	config     *rest.Config
	kube       dynamic.Interface
	aws        *awssim.Server
}

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	// The context bounds the sandbox's whole life (awssim serves until it
	// ends), so it has no deadline; ReadyTimeout bounds the start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var progress strings.Builder
	sb, err := sandbox.Start(ctx, sandbox.Options{Progress: &progress, AWS: &awssim.Options{}, ReadyTimeout: 5 * time.Minute})
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the sandbox (run `make tools` if bin/ is missing): %v\n%s", err, progress.String())
		return 1
	}
	defer func() {
		if err := sb.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the sandbox:", err)
		}
	}()
	defs, err := crds.CRDs()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := envtest.InstallCRDs(sb.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		fmt.Fprintln(os.Stderr, "installing the CRDs:", err)
		return 1
	}
	testCluster.kubeconfig, testCluster.config = sb.Kubeconfig, sb.Config
	testCluster.aws = sb.AWS
	// The provider finds awssim as it finds AWS: through the SDK's standard
	// environment (AWS_ENDPOINT_URL, AWS_REGION, credentials).
	for k, v := range sb.AWS.Env() {
		os.Setenv(k, v)
	}
	if testCluster.kube, err = dynamic.NewForConfig(sb.Config); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// providerBlock configures the provider for the sandbox.
func providerBlock() string {
	return fmt.Sprintf(`
provider "joist" {
  kubernetes = {
    config_path = %q
  }
}
`, testCluster.kubeconfig)
}
