package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

func binDir(t *testing.T) string {
	t.Helper()
	d, err := FindBinDir()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(d, b)); err != nil {
			t.Fatalf("%s missing from %s: run `make tools` first", b, d)
		}
	}
	return d
}

// TestControlPlaneRunsAWorkload starts every component, runs a Deployment on
// a kwok-managed Node, restarts etcd and kube-apiserver under it, and checks
// nothing is left running afterwards.
func TestControlPlaneRunsAWorkload(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var progress strings.Builder
	sb, err := Start(ctx, Options{BinDir: binDir(t), Progress: &progress})
	if err != nil {
		t.Fatalf("start: %v\n%s", err, progress.String())
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = sb.Stop()
		}
	}()
	kc, err := os.ReadFile(sb.Kubeconfig)
	if err != nil || !strings.Contains(string(kc), strings.TrimSuffix(sb.Config.Host, "/")) {
		t.Fatalf("admin kubeconfig %s does not point at %s (err %v)", sb.Kubeconfig, sb.Config.Host, err)
	}
	cs := kubernetes.NewForConfigOrDie(sb.Config)

	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "sandbox-node-1",
			Annotations: map[string]string{KwokNodeAnnotation: KwokNodeAnnotationValue},
			Labels:      map[string]string{corev1.LabelHostname: "sandbox-node-1", corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64"},
		},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"), corev1.ResourcePods: resource.MustParse("110")},
		},
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kwok, not this test, must make the Node Ready.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("kwok did not make the node Ready: %v", err)
	}

	replicas := int32(3)
	labels := map[string]string{"app": "pause"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:      "pause",
					Image:     "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// kube-controller-manager creates the pods, kube-scheduler binds them,
	// kwok reports them Running.
	var pods *corev1.PodList
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == node.Name && p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 3, nil
	})
	if err != nil {
		t.Fatalf("3 pods Running on %s: %v; pods: %s", node.Name, err, podSummary(pods))
	}

	// etcd and kube-apiserver restart on their data and certificates: the
	// Deployment is still there, the admin credentials still work, and the
	// other components reconnect: a fourth replica is created, bound and run.
	if err := sb.RestartAPIServer(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := sb.RestartEtcd(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "pause", metav1.GetOptions{})
		if err != nil {
			return false, nil // the apiserver may still be reconnecting to etcd
		}
		if *d.Spec.Replicas == 3 {
			four := int32(4)
			d.Spec.Replicas = &four
			if _, err := cs.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
				return false, nil
			}
		}
		pods, err = cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == 4, nil
	})
	if err != nil {
		t.Fatalf("after restarting etcd and kube-apiserver, 4 pods Running: %v; pods: %s", err, podSummary(pods))
	}

	// A pod kube-controller-manager marked not Ready while its node did not
	// report (as after a long control-plane outage) is Ready again once the
	// node reports, as a kubelet makes it.
	var pod corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			pod = p
		}
	}
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				p.Status.Conditions[i].Status = corev1.ConditionFalse
			}
		}
		_, err = cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("pod %s marked not Ready did not become Ready again: %v", pod.Name, err)
	}

	pids := sb.PIDs()
	if len(pids) != 3 {
		t.Errorf("expected 3 component processes beside the apiserver, got %v", pids)
	}
	apiHost := strings.TrimSuffix(strings.TrimPrefix(sb.Config.Host, "https://"), "/")
	if err := sb.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	stopped = true
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("component pid %d still running after Stop", pid)
		}
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left after Stop: %v", kids)
	}
	if c, err := net.DialTimeout("tcp", apiHost, time.Second); err == nil {
		c.Close()
		t.Errorf("kube-apiserver still accepts connections at %s after Stop", apiHost)
	}
}

func podSummary(pods *corev1.PodList) string {
	if pods == nil {
		return "none"
	}
	var b strings.Builder
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "%s node=%q phase=%s; ", p.Name, p.Spec.NodeName, p.Status.Phase)
	}
	return b.String()
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie has exited; only its parent's bookkeeping is left.
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// children lists live processes whose parent is this test process.
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces, so split after ')'.
		s := string(b)
		rest := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(rest) > 1 && rest[1] == me && rest[0] != "Z" {
			out = append(out, e.Name()+" "+s[strings.Index(s, "(")+1:strings.LastIndex(s, ")")])
		}
	}
	return out
}

// TestMissingBinaryIsNamed checks the error for a bin/ without a component.
func TestMissingBinaryIsNamed(t *testing.T) {
	empty := t.TempDir()
	_, err := Start(context.Background(), Options{BinDir: empty})
	if err == nil {
		t.Fatal("expected an error for an empty bin dir")
	}
	if !strings.Contains(err.Error(), "etcd") || !strings.Contains(err.Error(), "make tools") {
		t.Errorf("error should name the missing binary and the fix: %v", err)
	}
}

// TestTakenPortFailsFastNamingComponent occupies the scheduler's port: the
// start must fail (not hang) naming kube-scheduler and its log file.
func TestTakenPortFailsFastNamingComponent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = Start(ctx, Options{BinDir: binDir(t), Dir: dir, SchedulerPort: port})
	if err == nil {
		t.Fatal("expected the start to fail with the scheduler's port taken")
	}
	msg := err.Error()
	logPath := filepath.Join(dir, "logs", "kube-scheduler.log")
	if !strings.Contains(msg, "kube-scheduler") || !strings.Contains(msg, logPath) {
		t.Errorf("error should name kube-scheduler and %s: %v", logPath, msg)
	}
	if !strings.Contains(msg, "exited") {
		t.Errorf("error should say the component exited (fail fast, not time out): %v", msg)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left after a failed start: %v", kids)
	}
}
