// Package kubelet stands in for the kubelets of simulated EC2 instances and
// for the cloud node-lifecycle controller: when an instance whose user data
// joins the cluster reaches running, it registers the Node a real EKS node
// would (kwok then keeps it alive); when the instance terminates, it deletes
// the Node. Instances whose user data joins no cluster never register.
package kubelet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
)

// Options configure the stand-in.
type Options struct {
	Region         string        // for the topology.kubernetes.io/region label
	BootDelay      time.Duration // from running to Node registration
	KubeletVersion string        // default v1.36.0
	// ImageFamily names the family of an image ID (windows2022, al2023,
	// ...): Windows nodes report their build from it. Nil: none known.
	ImageFamily func(imageID string) string
	// EphemeralGiB is the size of the volume an instance's kubelet keeps
	// pods' storage on: its ephemeral-storage capacity. Nil or 0: 20Gi.
	EphemeralGiB func(instanceID string) int32
	Logger       logr.Logger
}

// Kubelet registers and removes Nodes for instances. Observe is its input;
// it is safe for concurrent use.
type Kubelet struct {
	client kubernetes.Interface
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	pending   map[string]*time.Timer // instance ID -> scheduled registration
	nodes     map[string]string      // instance ID -> Node name
	gone      map[string]bool        // instances that terminated while registering
	deletions map[string]*time.Timer // Node name -> scheduled retry of its deletion
	failBoots []*bootFailure
	// brokenImages never boot: every instance launched from one fails.
	brokenImages map[string]bool
	broken       map[string]bool // instances whose boot failed
}

// bootFailure makes the next count instances carrying tags fail to boot.
type bootFailure struct {
	count int
	tags  map[string]string
}

// New returns a stand-in that writes Nodes through cfg.
func New(cfg *rest.Config, opts Options) (*Kubelet, error) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if opts.KubeletVersion == "" {
		opts.KubeletVersion = "v1.36.0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Kubelet{client: client, opts: opts, ctx: ctx, cancel: cancel, pending: map[string]*time.Timer{}, nodes: map[string]string{}, gone: map[string]bool{}, deletions: map[string]*time.Timer{}, brokenImages: map[string]bool{}, broken: map[string]bool{}}, nil
}

// Observe reacts to an instance state change: registration after the boot
// delay when it runs, deletion of its Node once it is terminated.
func (k *Kubelet) Observe(in ec2types.Instance, userData string) {
	id := *in.InstanceId
	log := k.opts.Logger.WithValues("instance", id)
	switch in.State.Name {
	case ec2types.InstanceStateNameRunning:
		jc, err := ParseUserData(userData)
		if err != nil {
			log.Error(err, "user data does not parse; the instance never registers")
			return
		}
		if jc == nil {
			log.V(1).Info("user data joins no cluster; the instance never registers")
			return
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		if _, ok := k.pending[id]; ok || k.nodes[id] != "" || k.broken[id] {
			return
		}
		if k.bootFails(in) || k.brokenImages[aws.ToString(in.ImageId)] {
			k.broken[id] = true
			log.Info("boot fails: the instance never registers")
			return
		}
		k.schedule(in, jc, log, k.opts.BootDelay, 0)
	case ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated:
		k.mu.Lock()
		if t, ok := k.pending[id]; ok && t.Stop() {
			k.wg.Done() // the registration will not run
		}
		delete(k.pending, id)
		name := k.nodes[id]
		if in.State.Name == ec2types.InstanceStateNameTerminated {
			delete(k.nodes, id)
			k.gone[id] = name == ""
		}
		k.mu.Unlock()
		if name != "" && in.State.Name == ec2types.InstanceStateNameTerminated {
			k.deleteNode(name, log, 0)
		}
	}
}

// FailBoots makes the next n instances carrying tags (every one of them;
// none: any instance) that run and join the cluster fail to boot: they
// never register as Nodes, as when a node's bootstrap breaks.
func (k *Kubelet) FailBoots(n int, tags map[string]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n > 0 {
		k.failBoots = append(k.failBoots, &bootFailure{count: n, tags: tags})
	}
}

// FailImage makes every instance launched from the image fail to boot, as
// an AMI release whose bootstrap is broken.
func (k *Kubelet) FailImage(imageID string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.brokenImages[imageID] = true
}

// bootFails consumes a boot failure the instance matches. Caller holds k.mu.
func (k *Kubelet) bootFails(in ec2types.Instance) bool {
	have := map[string]string{}
	for _, t := range in.Tags {
		if t.Key != nil && t.Value != nil {
			have[*t.Key] = *t.Value
		}
	}
	for _, f := range k.failBoots {
		if f.count == 0 {
			continue
		}
		match := true
		for key, v := range f.tags {
			match = match && have[key] == v
		}
		if match {
			f.count--
			return true
		}
	}
	return false
}

// retryDelay spaces the retries of a call the apiserver did not answer, as
// a kubelet and the cloud node-lifecycle controller keep retrying theirs.
func retryDelay(attempt int) time.Duration {
	return min(time.Second<<min(attempt, 4), 15*time.Second)
}

// schedule registers the instance's Node after a delay. Caller holds k.mu.
func (k *Kubelet) schedule(in ec2types.Instance, jc *JoinConfig, log logr.Logger, after time.Duration, attempt int) {
	k.wg.Add(1)
	k.pending[*in.InstanceId] = time.AfterFunc(after, func() {
		defer k.wg.Done()
		k.register(in, jc, log, attempt)
	})
}

func (k *Kubelet) ephemeralGiB(in ec2types.Instance) int32 {
	if k.opts.EphemeralGiB == nil || in.InstanceId == nil {
		return 0
	}
	return k.opts.EphemeralGiB(*in.InstanceId)
}

func (k *Kubelet) register(in ec2types.Instance, jc *JoinConfig, log logr.Logger, attempt int) {
	id := *in.InstanceId
	k.mu.Lock()
	_, still := k.pending[id]
	delete(k.pending, id)
	k.mu.Unlock()
	if !still {
		return
	}
	node, err := Node(in, jc, k.opts.Region, k.opts.KubeletVersion, k.ephemeralGiB(in))
	if err != nil {
		log.Error(err, "building the Node")
		return
	}
	if node.Labels[corev1.LabelOSStable] == string(corev1.Windows) && k.opts.ImageFamily != nil && in.ImageId != nil {
		if build := WindowsBuild(k.opts.ImageFamily(*in.ImageId)); build != "" {
			node.Labels[corev1.LabelWindowsBuild] = build
		}
	}
	if err := k.post(node); err != nil {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.gone[id] || k.ctx.Err() != nil {
			return
		}
		log.Error(err, "registering the Node; retrying", "node", node.Name, "after", retryDelay(attempt))
		k.schedule(in, jc, log, retryDelay(attempt), attempt+1)
		return
	}
	k.mu.Lock()
	gone := k.gone[id]
	if !gone {
		k.nodes[id] = node.Name
	}
	k.mu.Unlock()
	log.Info("registered Node", "node", node.Name, "providerID", node.Spec.ProviderID)
	if gone { // terminated while registering: the lifecycle controller removes it
		k.deleteNode(node.Name, log, 0)
	}
}

// post creates the Node (or finds it from an earlier attempt) and posts its
// status.
func (k *Kubelet) post(node *corev1.Node) error {
	status := node.Status
	created, err := k.client.CoreV1().Nodes().Create(k.ctx, node, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = k.client.CoreV1().Nodes().Get(k.ctx, node.Name, metav1.GetOptions{})
	}
	if err != nil {
		return err
	}
	// The API server drops status on create; a kubelet posts it right after.
	// kwok may initialise the status in between: post ours over it (kwok
	// keeps capacity and allocatable that are set).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if created == nil {
			if created, err = k.client.CoreV1().Nodes().Get(k.ctx, node.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		created.Status = status
		_, err := k.client.CoreV1().Nodes().UpdateStatus(k.ctx, created, metav1.UpdateOptions{})
		created = nil
		return err
	})
	if err != nil {
		return fmt.Errorf("posting the Node status: %w", err)
	}
	return nil
}

func (k *Kubelet) deleteNode(name string, log logr.Logger, attempt int) {
	err := k.client.CoreV1().Nodes().Delete(k.ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		if k.ctx.Err() != nil {
			return
		}
		log.Error(err, "deleting the Node of a terminated instance; retrying", "node", name, "after", retryDelay(attempt))
		// Not on the caller's goroutine: it delivers every instance's events.
		k.mu.Lock()
		defer k.mu.Unlock()
		k.wg.Add(1)
		k.deletions[name] = time.AfterFunc(retryDelay(attempt), func() {
			defer k.wg.Done()
			k.mu.Lock()
			_, still := k.deletions[name]
			delete(k.deletions, name)
			k.mu.Unlock()
			if still {
				k.deleteNode(name, log, attempt+1)
			}
		})
		return
	}
	log.Info("deleted Node of terminated instance", "node", name)
}

// Close stops pending registrations and waits for those under way.
func (k *Kubelet) Close() {
	k.mu.Lock()
	for id, t := range k.pending {
		if t.Stop() {
			k.wg.Done()
		}
		delete(k.pending, id)
	}
	for name, t := range k.deletions {
		if t.Stop() {
			k.wg.Done()
		}
		delete(k.deletions, name)
	}
	k.mu.Unlock()
	k.wg.Wait()
	k.cancel()
}
