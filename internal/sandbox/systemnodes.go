package sandbox

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SystemNodeGroup labels the sandbox's stand-in for a managed node group.
const SystemNodeGroup = "system"

// createSystemNodes registers n kwok-managed m5.xlarge Nodes spread over
// zones, like an EKS managed node group running cluster add-ons.
func (s *Sandbox) createSystemNodes(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	cs, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("system-%d", i+1)
		zone := zones[i%len(zones)]
		res := corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("3920m"),
			corev1.ResourceMemory: resource.MustParse("14Gi"),
			corev1.ResourcePods:   resource.MustParse("58"),
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        name,
				Annotations: map[string]string{KwokNodeAnnotation: KwokNodeAnnotationValue},
				Labels: map[string]string{
					corev1.LabelHostname:             name,
					corev1.LabelOSStable:             "linux",
					corev1.LabelArchStable:           "amd64",
					corev1.LabelInstanceTypeStable:   "m5.xlarge",
					corev1.LabelTopologyZone:         zone,
					corev1.LabelTopologyRegion:       "us-west-2",
					"eks.amazonaws.com/nodegroup":    SystemNodeGroup,
					"eks.amazonaws.com/capacityType": "ON_DEMAND",
				},
			},
			Spec: corev1.NodeSpec{
				Taints: []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
			},
			Status: corev1.NodeStatus{Capacity: res, Allocatable: res},
		}
		if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("sandbox: creating system node %s: %w", name, err)
		}
	}
	s.step("%d system nodes (node group %q, tainted CriticalAddonsOnly)", n, SystemNodeGroup)
	return nil
}
