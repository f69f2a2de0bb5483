// Package sandbox starts a local EKS-like world on loopback: etcd and
// kube-apiserver (through controller-runtime's envtest), kube-scheduler,
// kube-controller-manager and kwok, each a real upstream binary from bin/.
// Tests use Start; the CLI mode `sandbox up|down|status` runs the same code
// in a background process.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// KwokNodeAnnotation marks the Nodes kwok keeps alive; anything that plays
// kubelet in the sandbox sets it on the Nodes it registers.
const (
	KwokNodeAnnotation      = "kwok.x-k8s.io/node"
	KwokNodeAnnotationValue = "fake"
)

// Options configures a sandbox. The zero value is usable.
type Options struct {
	// Dir holds kubeconfigs, component configs and logs. Default: a new
	// temporary directory.
	Dir string
	// BinDir holds the binaries `make tools` builds. Default: see FindBinDir.
	BinDir string
	// Progress receives one line per step; nil discards.
	Progress io.Writer
	// Ports of the components' serving endpoints; 0 picks a free port.
	SchedulerPort, ControllerManagerPort, KwokPort int
	// ReadyTimeout bounds each component's start. Default 90s.
	ReadyTimeout time.Duration
	// AWS, when set, starts awssim beside the control plane; its instances
	// join this cluster through the kubelet stand-in (RESTConfig is filled in).
	AWS *awssim.Options
	// RunControllers makes the sandbox run the joist controller process for
	// every Deployment of it (see controller.go), with ControllerBinary
	// (default: BinDir/terraform-provider-joist).
	RunControllers   bool
	ControllerBinary string
	// EveryReplica runs one controller process per Running pod of the
	// Deployment, as kubelets would, instead of one for the first pod: the
	// replicas then elect a leader among themselves. Standbys cost CPU,
	// which small machines may not spare.
	EveryReplica bool
	// SystemNodes kwok-managed Nodes stand in for the cluster's managed node
	// group, where the controller's own pods run. They carry the taint
	// CriticalAddonsOnly=true:NoSchedule so workloads do not land there.
	SystemNodes int
	// NodeLeaseSeconds is the lease duration kwok gives its Nodes (it
	// renews each lease every quarter of it); kube-controller-manager then
	// marks a Node NotReady after 1.25 times it without renewal. Default
	// 40, a kubelet's. Runs of thousands of Nodes on a small machine set it
	// higher: there kwok, starved of CPU, falls behind on renewals, and
	// Nodes that are up flap NotReady.
	NodeLeaseSeconds int
}

// Sandbox is a running local control plane.
type Sandbox struct {
	// Dir is the state directory; Kubeconfig the admin kubeconfig inside it.
	Dir, Kubeconfig, BinDir string
	// Config is an admin client configuration.
	Config *rest.Config
	// AWS is the local AWS when Options.AWS was set.
	AWS *awssim.Server

	env          *envtest.Environment
	leaseSeconds int
	runner       *controllerRunner
	components   []*component
	progress     io.Writer
	ownsDir      bool
}

// binaries are what `make tools` builds that the sandbox runs.
var binaries = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok", "kwok-stages.yaml"}

// Start brings the control plane up and waits until every component is
// ready. On error, whatever was started is stopped again.
func Start(ctx context.Context, opts Options) (_ *Sandbox, retErr error) {
	s := &Sandbox{progress: opts.Progress, leaseSeconds: opts.NodeLeaseSeconds}
	if s.leaseSeconds <= 0 {
		s.leaseSeconds = defaultNodeLeaseSeconds
	}
	if s.progress == nil {
		s.progress = io.Discard
	}
	bin := opts.BinDir
	if bin == "" {
		var err error
		if bin, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return nil, fmt.Errorf("sandbox: %s not found in %s: run `make tools` to build it", b, bin)
		}
	}
	s.BinDir = bin
	if opts.Dir == "" {
		d, err := os.MkdirTemp("", "joist-sandbox-")
		if err != nil {
			return nil, err
		}
		opts.Dir, s.ownsDir = d, true
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	s.Dir = dir
	if err := os.MkdirAll(s.logDir(), 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: creating %s: %w", s.logDir(), err)
	}
	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	defer func() {
		if retErr != nil {
			_ = s.Stop()
		}
	}()

	if err := s.startAPIServer(timeout); err != nil {
		return nil, err
	}
	if err := s.startScheduler(ctx, opts.SchedulerPort, timeout); err != nil {
		return nil, err
	}
	if err := s.startControllerManager(ctx, opts.ControllerManagerPort, timeout); err != nil {
		return nil, err
	}
	if err := s.startKwok(ctx, opts.KwokPort, timeout); err != nil {
		return nil, err
	}
	if opts.AWS != nil {
		if err := s.startAWS(ctx, *opts.AWS); err != nil {
			return nil, err
		}
	}
	if err := s.createSystemNodes(ctx, opts.SystemNodes); err != nil {
		return nil, err
	}
	if opts.RunControllers {
		binary := opts.ControllerBinary
		if binary == "" {
			binary = filepath.Join(bin, "terraform-provider-joist")
		}
		if err := s.startControllerRunner(ctx, binary, opts.EveryReplica); err != nil {
			return nil, err
		}
	}
	s.step("sandbox ready; kubeconfig %s", s.Kubeconfig)
	return s, nil
}

func (s *Sandbox) logDir() string { return filepath.Join(s.Dir, "logs") }

func (s *Sandbox) step(format string, args ...any) {
	fmt.Fprintf(s.progress, "sandbox: "+format+"\n", args...)
}

// PIDs returns the process IDs of the components started beside the
// apiserver (envtest owns etcd's and kube-apiserver's).
func (s *Sandbox) PIDs() []int {
	var pids []int
	for _, c := range s.components {
		pids = append(pids, c.pid())
	}
	return pids
}

// Stop stops every component in reverse start order. It is safe to call
// more than once.
func (s *Sandbox) Stop() error {
	var errs []error
	if s.runner != nil {
		s.step("stopping the joist controller processes")
		s.runner.shutdown()
		s.runner = nil
	}
	if s.AWS != nil {
		s.step("stopping awssim")
		s.AWS.Close()
		s.AWS = nil
	}
	for i := len(s.components) - 1; i >= 0; i-- {
		c := s.components[i]
		s.step("stopping %s", c.name)
		if err := c.stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	s.components = nil
	if s.env != nil {
		s.step("stopping kube-apiserver and etcd")
		if err := s.env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping kube-apiserver/etcd: %w", err))
		}
		s.env = nil
	}
	if s.ownsDir {
		_ = os.RemoveAll(s.Dir)
	}
	return errors.Join(errs...)
}

func (s *Sandbox) startAWS(ctx context.Context, opts awssim.Options) error {
	s.step("starting awssim")
	opts.RESTConfig = rest.CopyConfig(s.Config)
	srv, err := awssim.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("awssim failed to start: %w", err)
	}
	s.AWS = srv
	s.step("awssim ready at %s (region %s, cluster %s)", srv.URL(), srv.Options().Region, srv.Options().ClusterName)
	return nil
}

// Controllers lists the joist controller processes the sandbox runs.
func (s *Sandbox) Controllers() []ControllerProcess {
	if s.runner == nil {
		return nil
	}
	return s.runner.running()
}

// Env is what a process needs to use the sandbox: KUBECONFIG and, with
// awssim, the SDK's standard AWS endpoint, region and credentials.
func (s *Sandbox) Env() map[string]string {
	env := map[string]string{"KUBECONFIG": s.Kubeconfig}
	if s.AWS != nil {
		for k, v := range s.AWS.Env() {
			env[k] = v
		}
	}
	return env
}

// FindBinDir locates the tools directory: $JOIST_BIN_DIR, else the directory
// of the running executable when it holds kube-apiserver (bin/ itself), else
// bin/ of the enclosing checkout (found by hack/tools/go.mod).
func FindBinDir() (string, error) {
	if d := os.Getenv("JOIST_BIN_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if exe, err := os.Executable(); err == nil {
		d := filepath.Dir(exe)
		if _, err := os.Stat(filepath.Join(d, "kube-apiserver")); err == nil {
			return d, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "hack", "tools", "go.mod")); err == nil {
			return filepath.Join(d, "bin"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("sandbox: cannot find bin/ (looked for hack/tools/go.mod above %s): set JOIST_BIN_DIR or run from the checkout", wd)
		}
	}
}
