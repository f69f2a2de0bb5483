package controllerdeploy

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// WaitAvailable waits until the Deployment's rollout is complete: the
// current generation observed, every replica updated and available. When
// it gives up, the error carries what keeps the pods from running, in the
// kubelet's and the scheduler's own words: a container waiting
// (ImagePullBackOff, CrashLoopBackOff, ...) with its last exit and last
// log lines, or a pod that cannot be scheduled.
func WaitAvailable(ctx context.Context, dyn dynamic.Interface, namespace string) error {
	return poll(ctx, func() (bool, string, error) {
		d, err := dyn.Resource(resources["Deployment"]).Namespace(namespace).Get(ctx, Name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		gen := d.GetGeneration()
		observed, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
		want, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		updated, _, _ := unstructured.NestedInt64(d.Object, "status", "updatedReplicas")
		available, _, _ := unstructured.NestedInt64(d.Object, "status", "availableReplicas")
		total, _, _ := unstructured.NestedInt64(d.Object, "status", "replicas")
		done := observed >= gen && updated == want && available == want && total == want && condition(d, "Available") == "True"
		if done {
			return true, "", nil
		}
		status := fmt.Sprintf("Deployment %s/%s: %d of %d replicas updated, %d available", namespace, Name, updated, want, available)
		problems, err := podProblems(ctx, dyn, namespace)
		if err != nil {
			return false, "", err
		}
		if len(problems) == 0 {
			return false, status + " (are there nodes without the karpenter.sh/nodepool label for its pods, and can they pull the image?)", nil
		}
		return false, status + ":\n" + strings.Join(problems, "\n"), nil
	})
}

// podProblems describes, pod by pod, why the controller's pods are not
// ready.
func podProblems(ctx context.Context, dyn dynamic.Interface, namespace string) ([]string, error) {
	list, err := dyn.Resource(podsGVR).Namespace(namespace).List(ctx, metav1.ListOptions{LabelSelector: k8slabels.SelectorFromSet(selector()).String()})
	if err != nil {
		return nil, fmt.Errorf("listing the controller's pods: %w", err)
	}
	var out []string
	for _, item := range list.Items {
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &pod); err != nil {
			return nil, err
		}
		if pod.DeletionTimestamp == nil {
			out = append(out, PodProblems(&pod)...)
		}
	}
	sort.Strings(out)
	return out, nil
}

// PodProblems says why a pod is not ready, one line per cause: the
// scheduler's reason when it has no node, each container that waits with
// the kubelet's reason and message, and the container's last termination
// (exit code, reason, and its message: with FallbackToLogsOnError, the
// last lines it logged).
func PodProblems(pod *corev1.Pod) []string {
	var out []string
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out = append(out, fmt.Sprintf("pod %s is not scheduled: %s: %s", pod.Name, c.Reason, c.Message))
		}
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		if cs.Ready {
			continue
		}
		line := ""
		switch {
		case cs.State.Waiting != nil:
			line = fmt.Sprintf("container %s of pod %s is waiting: %s", cs.Name, pod.Name, cs.State.Waiting.Reason)
			if m := cs.State.Waiting.Message; m != "" {
				line += ": " + m
			}
		case cs.State.Terminated != nil:
			line = fmt.Sprintf("container %s of pod %s terminated", cs.Name, pod.Name)
		case cs.State.Running != nil:
			line = fmt.Sprintf("container %s of pod %s is running but not ready", cs.Name, pod.Name)
		}
		if line == "" {
			continue
		}
		t := cs.State.Terminated
		if t == nil {
			t = cs.LastTerminationState.Terminated
		}
		if t != nil {
			line += fmt.Sprintf(" (restarts: %d; last exit code %d, %s)", cs.RestartCount, t.ExitCode, t.Reason)
			if m := strings.TrimSpace(t.Message); m != "" {
				line += "; last log lines:\n    " + strings.ReplaceAll(lastLines(m, 20), "\n", "\n    ")
			}
		}
		out = append(out, line)
	}
	return out
}

// lastLines keeps the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
