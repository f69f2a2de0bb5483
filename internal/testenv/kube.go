package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Kube is a running envtest apiserver with the runtime's CRDs.
type Kube struct {
	Env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	Scheme *kruntime.Scheme
}

// StartKube starts etcd and kube-apiserver from the repository's bin/
// (KUBEBUILDER_ASSETS wins when set) with the NodePool, NodeClaim and
// EC2NodeClass CRDs installed.
func StartKube() (*Kube, error) {
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			return nil, fmt.Errorf("cannot locate the test source to find bin/")
		}
		bin = filepath.Join(filepath.Dir(file), "..", "..", "bin")
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s: run 'make tools' to build the Kubernetes binaries", name, bin)
		}
	}
	defs, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{BinaryAssetsDirectory: bin, CRDs: defs, ControlPlaneStartTimeout: 2 * time.Minute, ControlPlaneStopTimeout: time.Minute}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting the envtest apiserver from %s: %w", bin, err)
	}
	scheme := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme, awsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			_ = env.Stop()
			return nil, err
		}
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Kube{Env: env, Config: cfg, Client: c, Scheme: scheme}, nil
}

// Stop stops the apiserver and etcd.
func (k *Kube) Stop() error { return k.Env.Stop() }

// KubeFor starts an apiserver for one test and stops it when the test ends.
func KubeFor(t testing.TB) *Kube {
	t.Helper()
	k, err := StartKube()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Stop() })
	return k
}
