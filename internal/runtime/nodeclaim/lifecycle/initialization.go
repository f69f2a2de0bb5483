package lifecycle

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
)

// initialize waits until the registered Node can take the pods it was made
// for, then labels it karpenter.sh/initialized=true.
func (c *Controller) initialize(ctx context.Context, claim *v1.NodeClaim) (result, error) {
	if nodeclaim.IsTrue(claim, v1.ConditionTypeInitialized) {
		c.labelled.Delete(claim.UID)
		return result{}, nil
	}
	if !nodeclaim.IsTrue(claim, v1.ConditionTypeRegistered) {
		nodeclaim.Set(claim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, "NotLaunched", "Node not registered")
		return result{}, nil
	}
	nodes, err := nodeclaim.NodesFor(ctx, c.kube, claim)
	if err != nil {
		return result{}, err
	}
	if len(nodes) != 1 {
		nodeclaim.Set(claim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, "NodeNotFound", "Node not registered with cluster")
		return result{}, nil
	}
	node := nodes[0]
	if reason, msg := NotInitialized(claim, node); reason != "" {
		nodeclaim.Set(claim, v1.ConditionTypeInitialized, metav1.ConditionUnknown, reason, msg)
		return result{}, nil
	}
	nodeclaim.Set(claim, v1.ConditionTypeInitialized, metav1.ConditionTrue, v1.ConditionTypeInitialized, "")
	// A stale read of the claim may bring us back after the label is set,
	// with a Node read as stale: under load the cache trailed by seconds,
	// and every retry of a conflicting status write patched the Node again.
	if node.Labels[v1.NodeInitializedLabelKey] == "true" {
		return result{}, nil
	}
	if _, done := c.labelled.Load(claim.UID); done {
		return result{}, nil
	}
	stored := node.DeepCopy()
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	node.Labels[v1.NodeInitializedLabelKey] = "true"
	if err := c.kube.Patch(ctx, node, client.MergeFrom(stored)); err != nil {
		return result{}, fmt.Errorf("labelling node %s initialized: %w", node.Name, err)
	}
	c.labelled.Store(claim.UID, struct{}{})
	log.FromContext(ctx).Info("initialized nodeclaim", "node", node.Name, "allocatable", node.Status.Allocatable)
	return result{}, nil
}

// NotInitialized returns why the Node cannot be called initialized yet, or
// "" when it is: it must be Ready, its startup taints and the known
// ephemeral taints must be gone, and every extended resource the claim
// requests must be advertised (its device plugin registered).
func NotInitialized(claim *v1.NodeClaim, node *corev1.Node) (reason, message string) {
	if !state.IsNodeReady(node) {
		return "NodeNotReady", "Node status is NotReady"
	}
	for _, t := range claim.Spec.StartupTaints {
		if hasTaint(node, t) {
			return "StartupTaintsExist", fmt.Sprintf("StartupTaint %q still exists", t.ToString())
		}
	}
	for _, t := range node.Spec.Taints {
		if isEphemeral(t) {
			return "KnownEphemeralTaintsExist", fmt.Sprintf("KnownEphemeralTaint %q still exists", t.ToString())
		}
	}
	for name, q := range claim.Spec.Resources.Requests {
		if !isExtended(name) || q.IsZero() {
			continue
		}
		if have, ok := node.Status.Allocatable[name]; !ok || have.IsZero() {
			return "ResourceNotRegistered", fmt.Sprintf("Resource %q was requested but not registered", name)
		}
	}
	return "", ""
}

func isEphemeral(t corev1.Taint) bool {
	for _, e := range v1.KnownEphemeralTaints {
		if t.MatchTaint(&e) {
			return true
		}
	}
	return strings.HasPrefix(t.Key, v1.KnownEphemeralTaintKeyPrefix)
}

// isExtended is true for resources beyond the kubelet's own (cpu, memory,
// pods, ephemeral storage, hugepages).
func isExtended(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage:
		return false
	}
	return !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
