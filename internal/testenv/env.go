package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
)

// Options say what a test package's world holds. The apiserver always
// runs; everything else is asked for.
type Options struct {
	// AWS, when set, starts the simulated AWS with these options.
	AWS *awssim.Options
	// NodeRole creates NodeRole in the simulated IAM.
	NodeRole bool
	// Cloud builds the AWS cloud provider over the simulated AWS and the
	// apiserver, for the cluster AWS.ClusterName (see CloudSettings).
	Cloud bool
	// Controllers, when set, runs a manager with the controllers it
	// registers; Cache shapes the manager's cache.
	Controllers func(ctx context.Context, mgr manager.Manager, env *Env) error
	Cache       cache.Options
}

// Env is a running world.
type Env struct {
	Sim   *Sim
	Kube  *Kube
	Cloud *awsprovider.Provider
}

// CloudSettings are the AWS cloud provider's settings for cluster in tests.
func CloudSettings(cluster string) awsprovider.Settings {
	return awsprovider.Settings{
		ClusterName: cluster, ClusterEndpoint: "https://joist.example:6443", ClusterCABundle: "Q0E=",
		ClusterCIDR: "10.100.0.0/16", KubernetesVersion: "1.36",
	}
}

// Main boots the world opts describe, calls ready with it (to keep what the
// tests use), runs the package's tests and stops the world; it returns the
// exit code for TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, opts, ready)) }
func Main(m *testing.M, opts Options, ready func(*Env) error) int {
	crlog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := context.WithCancel(context.Background())
	env, stop, err := boot(ctx, opts)
	// The manager stops before the apiserver, which would otherwise wait on
	// its watches.
	defer stop()
	defer cancel()
	if err == nil && ready != nil {
		err = ready(env)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "test environment:", err)
		return 1
	}
	return m.Run()
}

func boot(ctx context.Context, opts Options) (*Env, func(), error) {
	env := &Env{}
	var stops []func()
	stop := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	var err error
	if opts.AWS != nil {
		if env.Sim, err = Start(*opts.AWS); err != nil {
			return nil, stop, err
		}
		stops = append(stops, env.Sim.Close)
		if opts.NodeRole {
			if err := env.Sim.CreateNodeRole(ctx); err != nil {
				return nil, stop, err
			}
		}
	}
	if env.Kube, err = StartKube(); err != nil {
		return nil, stop, err
	}
	stops = append(stops, func() { _ = env.Kube.Stop() })
	if opts.Cloud || opts.Controllers != nil {
		if env.Sim == nil {
			return nil, stop, errors.New("the cloud provider needs the simulated AWS: set Options.AWS")
		}
		if env.Cloud, err = awsprovider.New(env.Sim.Config, env.Kube.Client, CloudSettings(opts.AWS.ClusterName)); err != nil {
			return nil, stop, err
		}
	}
	if opts.Controllers == nil {
		return env, stop, nil
	}
	mgr, err := manager.New(env.Kube.Config, manager.Options{
		Scheme: env.Kube.Scheme, Cache: opts.Cache,
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		return nil, stop, err
	}
	if err := opts.Controllers(ctx, mgr, env); err != nil {
		return nil, stop, err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	return env, stop, nil
}
