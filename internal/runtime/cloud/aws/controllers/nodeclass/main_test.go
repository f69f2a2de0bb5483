package nodeclass_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ec2sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
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
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	if sim, err = testenv.Start(ec2sim.Options{ClusterName: cluster, ShuttingDownDuration: 50 * time.Millisecond}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	if err := sim.CreateNodeRole(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if kube, err = testenv.StartKube(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Stop the manager before the apiserver, or the apiserver waits on its watches.
	defer func() { cancel(); _ = kube.Stop() }()
	if prov, err = awsprovider.New(sim.Config, kube.Client, awsprovider.Settings{
		ClusterName: cluster, ClusterEndpoint: "https://joist.example:6443", ClusterCABundle: "Q0E=",
		ClusterCIDR: "10.100.0.0/16", KubernetesVersion: "1.36",
	}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := manager.New(kube.Config, manager.Options{Scheme: kube.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := nodeclass.NewController(mgr.GetClient(), prov, events.NewRecorder(mgr.GetEventRecorder("karpenter"))).Register(mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return m.Run()
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it returns nil or the context ends.
func eventually(t *testing.T, ctx context.Context, what string, cond func() error) {
	t.Helper()
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
