// Package operator assembles the runtime: settings, the controller-runtime
// manager (leader election on a Lease, health probes, Prometheus metrics,
// events), cluster state, the cloud provider and the controllers.
package operator

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime/debug"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/metrics"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/ratelimit"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// EventSource is the reporting controller name on events (Karpenter's).
const EventSource = "karpenter"

// Operator holds what controllers are built from.
type Operator struct {
	Settings *Settings
	Manager  manager.Manager
	Cluster  *state.Cluster
	Recorder *events.Recorder
	Clock    clock.Clock
	AWS      aws.Config
	// Cloud is set by SetCloud; calls are timed and counted.
	Cloud  cloud.Provider
	Logger logr.Logger
	// overlays is the NodeOverlay store WithAWS installs when the gate is on.
	overlays *nodeoverlay.Store
}

// Scheme knows the built-in types and the runtime's CRDs.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme, v1alpha1.AddToScheme, awsv1.AddToScheme} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// New loads the AWS configuration, discovers the cluster endpoint when it
// is not set, and builds the manager.
func New(ctx context.Context, s *Settings) (*Operator, error) {
	logger := NewLogger(s.LogLevel, os.Stdout)
	log.SetLogger(logger)
	ctx = log.IntoContext(ctx, logger)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration (AWS_REGION, credentials): %w", err)
	}
	if awsCfg.Region == "" {
		return nil, fmt.Errorf("no AWS region: set AWS_REGION")
	}
	restCfg, err := restConfig(s)
	if err != nil {
		return nil, err
	}
	if err := refuseForeignLeader(ctx, restCfg, s, time.Now()); err != nil {
		return nil, err
	}
	if err := discoverCluster(ctx, awsCfg, s, restCfg); err != nil {
		return nil, err
	}
	if ip, err := kubeDNSIP(ctx, restCfg); err != nil {
		// Custom DNS setups have no kube-dns: nodes then use their image's
		// default and the IP family comes from the service CIDR.
		logger.Info("cluster DNS address not discovered; node classes without kubelet clusterDNS use the node image's default", "error", err.Error())
	} else {
		s.KubeDNSIP = ip
		logger.V(1).Info("discovered kube-dns", "kube-dns-ip", ip)
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, err
	}
	if s.MemoryLimit > 0 {
		debug.SetMemoryLimit(s.MemoryLimit / 10 * 9)
	}
	// Before any controller registers: they size their workers from it.
	ratelimit.SetCPURequests(int64(s.CPURequests))
	metricsOpts := metricsserver.Options{BindAddress: fmt.Sprintf(":%d", s.MetricsPort)}
	if s.EnableProfiling {
		metricsOpts.ExtraHandlers = profilingHandlers()
	}
	leaseDuration := settings.LeaderLeaseDuration
	mgr, err := manager.New(restCfg, manager.Options{
		Scheme:                        scheme,
		Logger:                        logger,
		Cache:                         state.CacheOptions(),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        fmt.Sprintf(":%d", s.HealthProbePort),
		LeaderElection:                !s.DisableLeaderElection,
		LeaderElectionID:              s.LeaderElectionName,
		LeaderElectionNamespace:       s.LeaderElectionNamespace,
		LeaderElectionResourceLock:    "leases",
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 &leaseDuration,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the controller manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return fmt.Errorf("informer caches not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := state.Setup(ctx, mgr); err != nil {
		return nil, fmt.Errorf("registering field indexes: %w", err)
	}
	clk := clock.RealClock{}
	cluster := state.NewCluster(mgr.GetCache(), clk)
	if err := cluster.TrackClaims(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	return &Operator{
		Settings: s,
		Manager:  mgr,
		Cluster:  cluster,
		Recorder: events.NewRecorder(mgr.GetEventRecorder(EventSource)),
		Clock:    clk,
		AWS:      awsCfg,
		Logger:   logger,
	}, nil
}

// SetCloud installs the cloud provider, instrumented.
func (o *Operator) SetCloud(p cloud.Provider) { o.Cloud = metrics.Decorate(p) }

// Start runs the manager until ctx ends.
func (o *Operator) Start(ctx context.Context) error {
	o.Logger.Info("starting controller", "cluster", o.Settings.ClusterName, "endpoint", o.Settings.ClusterEndpoint,
		"leader-election", !o.Settings.DisableLeaderElection, "metrics-port", o.Settings.MetricsPort, "health-probe-port", o.Settings.HealthProbePort)
	return o.Manager.Start(log.IntoContext(ctx, o.Logger))
}

func restConfig(s *Settings) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if s.Kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", s.Kubeconfig)
		if err != nil {
			return nil, fmt.Errorf("KUBECONFIG %s: %w", s.Kubeconfig, err)
		}
	} else {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no in-cluster configuration (%w): run inside a pod or set KUBECONFIG", err)
		}
	}
	cfg.QPS = float32(s.KubeClientQPS)
	cfg.Burst = s.KubeClientBurst
	cfg.UserAgent = "joist-controller"
	return cfg, nil
}
