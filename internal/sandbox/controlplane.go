package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func (s *Sandbox) startAPIServer(timeout time.Duration) error {
	s.step("starting etcd and kube-apiserver")
	etcdLog, err := os.Create(filepath.Join(s.logDir(), "etcd.log"))
	if err != nil {
		return err
	}
	apiLog, err := os.Create(filepath.Join(s.logDir(), "kube-apiserver.log"))
	if err != nil {
		return err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    s.BinDir,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  stopGrace,
	}
	// Directories of the sandbox's own, not envtest's temporary ones, so a
	// restart (restart.go) finds the same data, certificates and
	// service-account keys; a previous run's are removed first.
	dataDir, certDir := filepath.Join(s.Dir, "etcd"), filepath.Join(s.Dir, "kube-apiserver")
	for _, d := range []string{dataDir, certDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	env.ControlPlane.Etcd = &envtest.Etcd{Out: etcdLog, Err: etcdLog, DataDir: dataDir}
	env.ControlPlane.APIServer = &envtest.APIServer{Out: apiLog, Err: apiLog, CertDir: certDir}
	// A real cluster admits pods through the ServiceAccount plugin;
	// kube-controller-manager creates the default ServiceAccounts here.
	env.ControlPlane.APIServer.Configure().Disable("disable-admission-plugins")
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("kube-apiserver/etcd failed to start: %w; logs %s and %s:\n%s", err,
			apiLog.Name(), etcdLog.Name(), tail(apiLog.Name(), 15))
	}
	s.env = env
	cfg.QPS, cfg.Burst = 200, 400
	s.Config = cfg

	admin, err := env.ControlPlane.AddUser(envtest.User{Name: "joist-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("creating the sandbox admin user: %w", err)
	}
	kc, err := admin.KubeConfig()
	if err != nil {
		return err
	}
	s.Kubeconfig = filepath.Join(s.Dir, "kubeconfig")
	if err := os.WriteFile(s.Kubeconfig, kc, 0o600); err != nil {
		return err
	}
	s.step("kube-apiserver ready at %s", cfg.Host)
	return nil
}

// userKubeconfig writes a kubeconfig for a component's own identity.
func (s *Sandbox) userKubeconfig(name string) (string, error) {
	u, err := s.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("creating user %s: %w", name, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return "", err
	}
	p := filepath.Join(s.Dir, name+".kubeconfig")
	return p, os.WriteFile(p, kc, 0o600)
}

func (s *Sandbox) run(ctx context.Context, name string, args []string, timeout time.Duration, ready func(context.Context) error) error {
	s.step("starting %s", name)
	c, err := startComponent(name, filepath.Join(s.BinDir, name), args, s.logDir())
	if err != nil {
		return err
	}
	s.components = append(s.components, c)
	if err := c.waitReady(ctx, timeout, ready); err != nil {
		return err
	}
	s.step("%s ready (pid %d)", name, c.pid())
	return nil
}

func (s *Sandbox) startScheduler(ctx context.Context, port int, timeout time.Duration) error {
	kc, err := s.userKubeconfig("system:kube-scheduler")
	if err != nil {
		return err
	}
	if port, err = portOrFree(port); err != nil {
		return err
	}
	// The config file is the only place for client QPS: defaults (50/100)
	// would make kube-scheduler, not Joist, the bottleneck at scale.
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
  qps: 500
  burst: 1000
leaderElection:
  leaderElect: false
`, kc)
	cfgPath := filepath.Join(s.Dir, "kube-scheduler.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return err
	}
	args := []string{
		"--config=" + cfgPath,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(s.Dir, "kube-scheduler-certs"),
	}
	return s.run(ctx, "kube-scheduler", args, timeout, healthz(fmt.Sprintf("https://%s/healthz", hostPort(port))))
}

func (s *Sandbox) startControllerManager(ctx context.Context, port int, timeout time.Duration) error {
	kc, err := s.userKubeconfig("system:kube-controller-manager")
	if err != nil {
		return err
	}
	if port, err = portOrFree(port); err != nil {
		return err
	}
	certDir := s.env.ControlPlane.APIServer.CertDir
	caPath := filepath.Join(s.Dir, "ca.crt")
	if err := os.WriteFile(caPath, s.Config.CAData, 0o644); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(s.Dir, "kube-controller-manager-certs"),
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		// Signs the tokens of ServiceAccounts with the key the apiserver verifies.
		"--service-account-private-key-file=" + filepath.Join(certDir, "sa-signer.key"),
		"--root-ca-file=" + caPath,
		"--kube-api-qps=500",
		"--kube-api-burst=1000",
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--concurrent-gc-syncs=50",
	}
	if s.leaseSeconds != defaultNodeLeaseSeconds {
		args = append(args, fmt.Sprintf("--node-monitor-grace-period=%ds", s.leaseSeconds*5/4))
	}
	return s.run(ctx, "kube-controller-manager", args, timeout, healthz(fmt.Sprintf("https://%s/healthz", hostPort(port))))
}

// defaultNodeLeaseSeconds is a kubelet's node lease duration.
const defaultNodeLeaseSeconds = 40

func (s *Sandbox) startKwok(ctx context.Context, port int, timeout time.Duration) error {
	kc, err := s.userKubeconfig("system:kwok")
	if err != nil {
		return err
	}
	if port, err = portOrFree(port); err != nil {
		return err
	}
	resync := filepath.Join(s.Dir, "kwok-pod-ready-resync.yaml")
	if err := os.WriteFile(resync, []byte(podReadyResyncStage), 0o644); err != nil {
		return err
	}
	args := []string{
		"--kubeconfig=" + kc,
		"--config=" + filepath.Join(s.BinDir, "kwok-stages.yaml"),
		"--config=" + resync,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeAnnotationValue,
		"--server-address=" + hostPort(port),
		"--node-lease-duration-seconds=" + strconv.Itoa(s.leaseSeconds),
		"--cidr=10.64.0.0/12",
	}
	return s.run(ctx, "kwok", args, timeout, healthz(fmt.Sprintf("http://%s/healthz", hostPort(port))))
}

// podReadyResyncStage does for kwok's pods what a kubelet's status manager
// does: when kube-controller-manager has marked a running pod not Ready
// because its node stopped reporting (a control-plane outage longer than the
// node monitor grace period), the kubelet reports the pod's real status
// again once it reaches the apiserver; its containers never stopped. kwok's
// own stages only make Pending pods Ready, so without this a pod marked not
// Ready stays so for good: its PodDisruptionBudget then allows no eviction
// and every drain in the cluster stalls.
const podReadyResyncStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready-resync
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Running'
    - key: '.status.conditions.[] | select( .type == "ContainersReady" ) | .status'
      operator: 'In'
      values:
      - 'True'
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'In'
      values:
      - 'False'
  next:
    statusTemplate: |
      conditions:
      - lastTransitionTime: {{ Now | Quote }}
        status: "True"
        type: Ready
`
