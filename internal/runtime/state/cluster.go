// Package state is the runtime's view of the cluster: Nodes, NodeClaims,
// pods, DaemonSets, NodePools, namespaces and LimitRanges from the
// manager's informers (plus the storage objects behind pod volumes on
// demand), joined into consistent snapshots for the solver, plus what only
// this process knows (nominations and NodeClaims created but not yet seen
// by the informers).
package state

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Field indexes the runtime's controllers look objects up by.
const (
	NodeProviderIDIndex  = "spec.providerID"
	PodNodeNameIndex     = "spec.nodeName"
	ClaimProviderIDIndex = "status.providerID"
)

// createdTTL bounds how long a created NodeClaim is remembered while the
// informer has not delivered it yet.
const createdTTL = time.Minute

// Cluster is the shared state. Its methods are safe for concurrent use.
type Cluster struct {
	kube  client.Reader
	clock clock.Clock

	mu          sync.Mutex
	nominations map[types.UID]Nomination
	created     map[string]createdClaim
}

type createdClaim struct {
	claim *v1.NodeClaim
	at    time.Time
}

// NewCluster reads through kube, normally the manager's cache.
func NewCluster(kube client.Reader, clk clock.Clock) *Cluster {
	return &Cluster{kube: kube, clock: clk, nominations: map[types.UID]Nomination{}, created: map[string]createdClaim{}}
}

// TrackClaims lets the NodeClaim informer tell the cluster which created
// claims it has shown: from then on the cache, not the copy kept at
// creation, is the truth, including a deletion.
func (c *Cluster) TrackClaims(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, &v1.NodeClaim{})
	if err != nil {
		return fmt.Errorf("nodeclaim informer: %w", err)
	}
	observe := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if claim, ok := obj.(*v1.NodeClaim); ok {
			c.ClaimObserved(claim.Name)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: observe,
	})
	return err
}

// ClaimObserved forgets the creation copy of a claim the informer has shown.
func (c *Cluster) ClaimObserved(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.created, name)
}

// Setup registers the field indexes the runtime relies on, and the
// informers of objects only read on demand (namespaces for affinity
// namespaceSelectors, LimitRanges for DaemonSet requests, and the claims,
// volumes and storage classes behind pod volumes), so they sync with the
// manager's cache before the first scheduling pass instead of lazily
// inside it.
func Setup(ctx context.Context, mgr manager.Manager) error {
	for _, obj := range []client.Object{&corev1.Namespace{}, &corev1.LimitRange{}, &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{}, &storagev1.StorageClass{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("informer for %T: %w", obj, err)
		}
	}
	idx := mgr.GetFieldIndexer()
	if err := idx.IndexField(ctx, &corev1.Node{}, NodeProviderIDIndex, func(o client.Object) []string {
		if id := o.(*corev1.Node).Spec.ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idx.IndexField(ctx, &v1.NodeClaim{}, ClaimProviderIDIndex, func(o client.Object) []string {
		if id := o.(*v1.NodeClaim).Status.ProviderID; id != "" {
			return []string{id}
		}
		return nil
	}); err != nil {
		return err
	}
	return idx.IndexField(ctx, &corev1.Pod{}, PodNodeNameIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	})
}

// ClaimCreated remembers a NodeClaim this process just created, so the next
// snapshot counts it even if the informer has not caught up.
func (c *Cluster) ClaimCreated(claim *v1.NodeClaim) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.created[claim.Name] = createdClaim{claim: claim.DeepCopy(), at: c.clock.Now()}
}
