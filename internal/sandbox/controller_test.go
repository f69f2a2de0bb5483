package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
)

// TestSandboxRunsTheControllerDeployment deploys the controller as a
// Deployment would be in a real cluster and expects the sandbox to run the
// real binary as its pod: it takes the leader-election Lease with the
// ServiceAccount's identity, restarts on a rollout and stops on deletion.
func TestSandboxRunsTheControllerDeployment(t *testing.T) {
	bin := binDir(t)
	binary := filepath.Join(bin, "terraform-provider-joist")
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("%s missing: run `make build` first", binary)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const cluster = "sandbox-controller"
	sb, err := Start(ctx, Options{BinDir: bin, AWS: &awssim.Options{ClusterName: cluster}, RunControllers: true, SystemNodes: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	cs := kubernetes.NewForConfigOrDie(sb.Config)
	installCRDs(ctx, t, sb)

	const ns = "joist"
	mustCreate(t, func() error {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "joist"}}, metav1.CreateOptions{})
		return err
	})
	mustCreate(t, func() error {
		_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "joist-test"},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "joist", Namespace: ns}},
		}, metav1.CreateOptions{})
		return err
	})
	replicas := int32(2)
	labels := map[string]string{"app.kubernetes.io/name": "joist"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "joist", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					ServiceAccountName: "joist",
					NodeSelector:       map[string]string{"eks.amazonaws.com/nodegroup": SystemNodeGroup},
					Tolerations:        []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
					Containers: []corev1.Container{{
						Name:  "controller",
						Image: "ghcr.io/joistdev/" + ControllerImage + ":test",
						Args:  []string{"controller"},
						Env: []corev1.EnvVar{
							{Name: "CLUSTER_NAME", Value: cluster},
							{Name: "LOG_LEVEL", Value: "info"},
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
						},
					}},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	firstPID := waitController(ctx, t, sb, "")
	// The process holds the leader-election Lease in the pod's namespace.
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := cs.CoordinationV1().Leases(ns).Get(ctx, "karpenter-leader-election", metav1.GetOptions{})
		return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", nil
	})
	if err != nil {
		t.Fatalf("no leader-election Lease held in %s: %v; controller log:\n%s", ns, err, controllerLog(sb, ns))
	}

	// A rollout (changed pod template) restarts the process with the new settings.
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, "joist", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Spec.Template.Spec.Containers[0].Env[1].Value = "debug"
	if _, err := cs.AppsV1().Deployments(ns).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	secondPID := waitController(ctx, t, sb, firstPID)
	if alive(atoi(firstPID)) {
		t.Errorf("the pre-rollout controller (pid %s) still runs", firstPID)
	}

	// Deleting the Deployment stops the process.
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, "joist", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return len(sb.Controllers()) == 0 && !alive(atoi(secondPID)), nil
	})
	if err != nil {
		t.Fatalf("controller still running after its Deployment was deleted: %v", sb.Controllers())
	}
}

// waitController waits for one running controller process whose PID differs
// from previous, and returns its PID.
func waitController(ctx context.Context, t *testing.T, sb *Sandbox, previous string) string {
	t.Helper()
	var pid string
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		running := sb.Controllers()
		if len(running) != 1 || running[0].Deployment.String() != "joist/joist" || !strings.HasPrefix(running[0].Pod, "joist-") {
			return false, nil
		}
		pid = strconv.Itoa(running[0].PID)
		return pid != previous, nil
	})
	if err != nil {
		t.Fatalf("no controller process (previous pid %q): %v; running %v", previous, err, sb.Controllers())
	}
	return pid
}

func controllerLog(sb *Sandbox, ns string) string {
	logs, _ := filepath.Glob(filepath.Join(sb.logDir(), "controller-"+ns+"-*.log"))
	var out strings.Builder
	for _, l := range logs {
		out.WriteString(l + ":\n" + tail(l, 30))
	}
	return out.String()
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func mustCreate(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

func installCRDs(ctx context.Context, t *testing.T, sb *Sandbox) {
	t.Helper()
	list, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	ac := apiextensionsclient.NewForConfigOrDie(sb.Config)
	for _, crd := range list {
		if _, err := ac.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, crd := range list {
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			c, err := ac.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("CRD %s not established: %v", crd.Name, err)
		}
	}
}
