package termination

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
)

// Eviction retry backoff per pod (a PDB refusing, the apiserver busy).
const (
	evictionBackoffBase = 100 * time.Millisecond
	evictionBackoffMax  = 10 * time.Second
	evictionWorkers     = 20
)

type evictionKey struct {
	types.NamespacedName
	UID types.UID
	// Reason is the drain reason the pod is counted under.
	Reason string
}

// EvictionQueue evicts pods through the Eviction API, retrying each with
// exponential backoff until it is evicted or gone. It is a manager runnable.
type EvictionQueue struct {
	kube     client.Client
	recorder *events.Recorder
	queue    workqueue.TypedRateLimitingInterface[evictionKey]
}

// NewEvictionQueue builds the queue; add it to the manager to run it.
func NewEvictionQueue(kube client.Client, rec *events.Recorder) *EvictionQueue {
	return &EvictionQueue{
		kube:     kube,
		recorder: rec,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[evictionKey](evictionBackoffBase, evictionBackoffMax),
			workqueue.TypedRateLimitingQueueConfig[evictionKey]{Name: "eviction"}),
	}
}

// Add queues pods for eviction; a pod already queued is not added twice.
func (q *EvictionQueue) Add(reason string, pods ...*corev1.Pod) {
	for _, pod := range pods {
		q.queue.Add(evictionKey{NamespacedName: client.ObjectKeyFromObject(pod), UID: pod.UID, Reason: reason})
	}
}

// Start runs the workers until ctx ends.
func (q *EvictionQueue) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, log.FromContext(ctx).WithName("eviction"))
	go func() {
		<-ctx.Done()
		q.queue.ShutDown()
	}()
	done := make(chan struct{})
	for range evictionWorkers {
		go func() {
			defer func() { done <- struct{}{} }()
			for q.next(ctx) {
			}
		}()
	}
	for range evictionWorkers {
		<-done
	}
	return nil
}

// NeedLeaderElection keeps evictions on the leader.
func (q *EvictionQueue) NeedLeaderElection() bool { return true }

func (q *EvictionQueue) next(ctx context.Context) bool {
	key, shutdown := q.queue.Get()
	if shutdown {
		return false
	}
	defer q.queue.Done(key)
	if q.evict(ctx, key) {
		q.queue.Forget(key)
	} else {
		q.queue.AddRateLimited(key)
	}
	return true
}

// evict makes one attempt; true means the pod needs no further attempt.
func (q *EvictionQueue) evict(ctx context.Context, key evictionKey) bool {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: key.UID}}
	// A pod the cache no longer holds (or holds as a new pod of the same
	// name) needs nothing more; retrying it only costs API calls.
	current := &corev1.Pod{}
	if err := q.kube.Get(ctx, key.NamespacedName, current); apierrors.IsNotFound(err) || (err == nil && current.UID != key.UID) {
		return true
	}
	eviction := &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &key.UID}},
	}
	err := q.kube.SubResource("eviction").Create(ctx, pod, eviction)
	code := 200
	if err != nil {
		code = 0
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			code = int(status.Status().Code)
		}
	}
	evictionRequests.WithLabelValues(strconv.Itoa(code)).Inc()
	logger := log.FromContext(ctx).WithValues("pod", key.NamespacedName.String())
	switch {
	case err == nil:
		podsDrained.WithLabelValues(key.Reason).Inc()
		q.recorder.Normal(pod, reasonEvicted, actionDrain, "Evicted pod")
		logger.V(1).Info("evicted pod")
		return true
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
		// Gone, or replaced by a pod of the same name: nothing to evict.
		return true
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace is being deleted, which overrides PDBs, and the
		// Eviction API refuses new objects there: delete the pod itself.
		err := q.kube.Delete(ctx, pod, client.Preconditions{UID: &key.UID})
		if err == nil || apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			podsDrained.WithLabelValues(key.Reason).Inc()
			return true
		}
		logger.Error(err, "deleting pod of a terminating namespace")
		return false
	case apierrors.IsTooManyRequests(err):
		q.recorder.Warning(pod, reasonFailedDraining, actionDrain, "Evicting pod violates a PDB: %s", err)
		return false
	case strings.Contains(err.Error(), "more than one PodDisruptionBudget"):
		q.recorder.Warning(pod, reasonFailedDraining, actionDrain, "Pod is covered by more than one PDB and cannot be evicted; give it a single PDB")
		return false
	default:
		logger.Error(err, "evicting pod")
		return false
	}
}
