package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The sandbox plays kubelet for the controller's Deployment: kwok keeps its
// pods Running but runs no containers, so the runner starts the bundled
// binary itself, the way a kubelet would start the container. For each
// Deployment whose container runs the joist image in `controller` mode, one
// process runs as the first Running pod of the Deployment, or with
// Options.EveryReplica one per Running pod (the replicas elect a leader
// among themselves as they do in a cluster):
//   - arguments: the container's args;
//   - environment: the container's env (fieldRefs resolved against that pod,
//     secret and config map references read from the cluster), plus the
//     AWS endpoint of awssim and credentials of the controller's own
//     (ControllerAccessKeyID, standing in for Pod Identity's), so awssim's
//     request log tells the controller's calls from everyone else's;
//   - identity: a kubeconfig holding a token issued for the pod's
//     ServiceAccount (TokenRequest), so RBAC applies exactly as in-cluster;
//   - ports: METRICS_PORT and HEALTH_PROBE_PORT get free loopback ports,
//     as a pod's own network namespace would give it its own;
//   - LEADER_ELECTION_NAMESPACE defaults to the pod's namespace, which
//     in-cluster comes from the mounted service account.
//
// A changed pod template (a rollout) restarts the process; a deleted
// Deployment or pod stops it; a crashed process is restarted with backoff,
// its log continued.
type controllerRunner struct {
	sb     *Sandbox
	binary string
	cs     kubernetes.Interface
	every  bool

	mu    sync.Mutex
	procs map[types.NamespacedName]*controllerProcess // by pod
	done  chan struct{}
	stop  context.CancelFunc
}

type controllerProcess struct {
	deployment types.NamespacedName
	hash       string
	comp       *component
	metrics    string
	health     string
	restarts   int
	nextTry    time.Time
}

// ControllerAccessKeyID is the access key the controller processes sign
// their AWS calls with.
const ControllerAccessKeyID = "AKIAJOISTCONTROLLER1"

// ControllerImage is the image repository the runner recognises.
const ControllerImage = "joist-controller"

func (s *Sandbox) startControllerRunner(ctx context.Context, binary string, every bool) error {
	if _, err := os.Stat(binary); err != nil {
		return fmt.Errorf("sandbox: controller binary %s: %w (run `make build`)", binary, err)
	}
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r := &controllerRunner{sb: s, binary: binary, cs: cs, every: every, procs: map[types.NamespacedName]*controllerProcess{}, done: make(chan struct{}), stop: cancel}
	s.runner = r
	go r.loop(ctx)
	s.step("running the joist controller for its Deployments (binary %s)", binary)
	return nil
}

func (r *controllerRunner) loop(ctx context.Context) {
	defer close(r.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// shutdown stops the loop and every controller process.
func (r *controllerRunner) shutdown() {
	r.stop()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, p := range r.procs {
		_ = p.comp.stop(10 * time.Second)
		delete(r.procs, key)
	}
}

// ControllerProcess is one joist controller process the sandbox runs.
type ControllerProcess struct {
	Deployment types.NamespacedName
	Pod        string
	PID        int
	Log        string
	// MetricsAddr is where the process serves /metrics (and, with
	// ENABLE_PROFILING, /debug/pprof/); HealthAddr /healthz and /readyz.
	MetricsAddr, HealthAddr string
}

func (p ControllerProcess) String() string {
	return fmt.Sprintf("deployment %s as pod %s (pid %d, log %s)", p.Deployment, p.Pod, p.PID, p.Log)
}

// running lists the live controller processes, by Deployment and pod.
func (r *controllerRunner) running() []ControllerProcess {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ControllerProcess
	for pod, p := range r.procs {
		select {
		case <-p.comp.exited:
			continue
		default:
		}
		out = append(out, ControllerProcess{Deployment: p.deployment, Pod: pod.Name, PID: p.comp.pid(), Log: p.comp.logPath, MetricsAddr: p.metrics, HealthAddr: p.health})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Deployment != out[j].Deployment {
			return out[i].Deployment.String() < out[j].Deployment.String()
		}
		return out[i].Pod < out[j].Pod
	})
	return out
}

func (r *controllerRunner) sync(ctx context.Context) {
	deps, err := r.cs.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	seen := map[types.NamespacedName]bool{}
	for i := range deps.Items {
		d := &deps.Items[i]
		c := controllerContainer(d)
		if c == nil || d.DeletionTimestamp != nil || (d.Spec.Replicas != nil && *d.Spec.Replicas == 0) {
			continue
		}
		key := types.NamespacedName{Namespace: d.Namespace, Name: d.Name}
		pods := r.runningPods(ctx, d)
		if !r.every && len(pods) > 1 {
			pods = pods[:1]
		}
		for _, pod := range pods {
			podKey := types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}
			seen[podKey] = true
			r.ensure(ctx, key, podKey, c, pod)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for pod, p := range r.procs {
		if !seen[pod] {
			r.sb.step("stopping the controller of deployment %s (pod %s)", p.deployment, pod.Name)
			_ = p.comp.stop(10 * time.Second)
			delete(r.procs, pod)
		}
	}
}

// controllerContainer returns the container that runs the joist binary in
// controller mode, or nil.
func controllerContainer(d *appsv1.Deployment) *corev1.Container {
	for i := range d.Spec.Template.Spec.Containers {
		c := &d.Spec.Template.Spec.Containers[i]
		if strings.Contains(c.Image, ControllerImage) && len(c.Args) > 0 && c.Args[0] == "controller" {
			return c
		}
	}
	return nil
}

// runningPods are the Deployment's Running pods, by name.
func (r *controllerRunner) runningPods(ctx context.Context, d *appsv1.Deployment) []*corev1.Pod {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil
	}
	pods, err := r.cs.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil
	}
	var running []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p)
		}
	}
	sort.Slice(running, func(i, j int) bool { return running[i].Name < running[j].Name })
	return running
}

func (r *controllerRunner) ensure(ctx context.Context, key, podKey types.NamespacedName, c *corev1.Container, pod *corev1.Pod) {
	env, err := r.environment(ctx, c, pod)
	if err != nil {
		r.sb.step("controller of deployment %s not started: %v", key, err)
		return
	}
	h := templateHash(c.Args, env, pod.Name)
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.procs[podKey]
	if p != nil && p.hash == h {
		select {
		case <-p.comp.exited:
			if time.Now().Before(p.nextTry) {
				return
			}
			p.restarts++
		default:
			return
		}
	}
	restarts := 0
	if p != nil {
		_ = p.comp.stop(10 * time.Second)
		if p.hash == h {
			restarts = p.restarts
		}
	}
	full, metrics, health, err := r.withSandboxEnv(ctx, env, pod)
	if err != nil {
		r.sb.step("controller of deployment %s not started: %v", key, err)
		return
	}
	// One log per pod, continued across restarts as a container's is.
	comp, err := startComponentLog("controller-"+pod.Namespace+"-"+pod.Name, r.binary, c.Args, full, r.sb.logDir(), true)
	if err != nil {
		r.sb.step("controller of deployment %s not started: %v", key, err)
		return
	}
	backoff := time.Duration(1<<min(restarts, 5)) * time.Second
	r.procs[podKey] = &controllerProcess{deployment: key, hash: h, comp: comp, metrics: metrics, health: health, restarts: restarts, nextTry: time.Now().Add(backoff)}
	r.sb.step("controller of deployment %s running as pod %s (pid %d)", key, pod.Name, comp.pid())
}

// environment resolves the container's env against the pod it runs as.
func (r *controllerRunner) environment(ctx context.Context, c *corev1.Container, pod *corev1.Pod) ([]string, error) {
	var out []string
	for _, e := range c.Env {
		v := e.Value
		if src := e.ValueFrom; src != nil {
			switch {
			case src.FieldRef != nil:
				v = fieldValue(pod, src.FieldRef.FieldPath)
			case src.SecretKeyRef != nil:
				s, err := r.cs.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					return nil, fmt.Errorf("env %s: %w", e.Name, err)
				}
				v = string(s.Data[src.SecretKeyRef.Key])
			case src.ConfigMapKeyRef != nil:
				cm, err := r.cs.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
				if err != nil {
					return nil, fmt.Errorf("env %s: %w", e.Name, err)
				}
				v = cm.Data[src.ConfigMapKeyRef.Key]
			case src.ResourceFieldRef != nil:
				v = resourceValue(c, src.ResourceFieldRef)
			}
		}
		out = append(out, e.Name+"="+v)
	}
	return out, nil
}

func fieldValue(pod *corev1.Pod, path string) string {
	switch path {
	case "metadata.name":
		return pod.Name
	case "metadata.namespace":
		return pod.Namespace
	case "metadata.uid":
		return string(pod.UID)
	case "spec.nodeName":
		return pod.Spec.NodeName
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName
	case "status.podIP":
		return pod.Status.PodIP
	case "status.hostIP":
		return pod.Status.HostIP
	}
	if strings.HasPrefix(path, "metadata.labels['") {
		return pod.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
	}
	if strings.HasPrefix(path, "metadata.annotations['") {
		return pod.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
	}
	return ""
}

func resourceValue(c *corev1.Container, ref *corev1.ResourceFieldSelector) string {
	name, list := ref.Resource, c.Resources.Limits
	if strings.HasPrefix(name, "requests.") {
		name, list = strings.TrimPrefix(name, "requests."), c.Resources.Requests
	} else {
		name = strings.TrimPrefix(name, "limits.")
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return ""
	}
	div := ref.Divisor
	if div.IsZero() {
		return strconv.FormatInt(q.Value(), 10)
	}
	return strconv.FormatInt(q.MilliValue()/div.MilliValue(), 10)
}

// withSandboxEnv adds what the cluster and AWS provide to a real pod, and
// returns the addresses the process will serve its metrics and health
// probes on.
func (r *controllerRunner) withSandboxEnv(ctx context.Context, env []string, pod *corev1.Pod) (_ []string, metrics, health string, _ error) {
	kc, err := r.serviceAccountKubeconfig(ctx, pod)
	if err != nil {
		return nil, "", "", err
	}
	set := map[string]bool{}
	for _, kv := range env {
		set[strings.SplitN(kv, "=", 2)[0]] = true
	}
	out := append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out = append(out, "KUBECONFIG="+kc)
	for _, k := range []string{"METRICS_PORT", "HEALTH_PROBE_PORT"} {
		p, err := FreePort()
		if err != nil {
			return nil, "", "", err
		}
		out = append(out, k+"="+strconv.Itoa(p))
		if k == "METRICS_PORT" {
			metrics = hostPort(p)
		} else {
			health = hostPort(p)
		}
	}
	if !set["LEADER_ELECTION_NAMESPACE"] {
		out = append(out, "LEADER_ELECTION_NAMESPACE="+pod.Namespace)
	}
	if r.sb.AWS != nil {
		for k, v := range r.sb.AWS.Env() {
			out = append(out, k+"="+v)
		}
		// Later entries win (os/exec keeps the last of duplicate keys).
		out = append(out, "AWS_ACCESS_KEY_ID="+ControllerAccessKeyID)
	}
	return out, metrics, health, nil
}

// serviceAccountKubeconfig writes a kubeconfig with a token issued for the
// pod's ServiceAccount.
func (r *controllerRunner) serviceAccountKubeconfig(ctx context.Context, pod *corev1.Pod) (string, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	exp := int64(24 * 3600)
	tok, err := r.cs.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token for service account %s/%s: %w", pod.Namespace, sa, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["sandbox"] = &clientcmdapi.Cluster{Server: r.sb.Config.Host, CertificateAuthorityData: r.sb.Config.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["sandbox"] = &clientcmdapi.Context{Cluster: "sandbox", AuthInfo: sa, Namespace: pod.Namespace}
	cfg.CurrentContext = "sandbox"
	path := filepath.Join(r.sb.Dir, fmt.Sprintf("sa-%s-%s.kubeconfig", pod.Namespace, sa))
	return path, clientcmd.WriteToFile(*cfg, path)
}

func templateHash(args, env []string, pod string) string {
	h := sha256.New()
	for _, s := range args {
		h.Write([]byte(s + "\x00"))
	}
	h.Write([]byte{1})
	for _, s := range env {
		h.Write([]byte(s + "\x00"))
	}
	h.Write([]byte(pod))
	return hex.EncodeToString(h.Sum(nil))
}
