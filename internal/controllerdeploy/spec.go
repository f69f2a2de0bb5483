package controllerdeploy

import (
	"fmt"
	"sort"
	"strings"
)

// Spec is everything the objects are rendered from.
type Spec struct {
	Namespace      string // default kube-system
	ServiceAccount string // default joist
	Image          string
	Replicas       int32
	// IRSARoleARN annotates the ServiceAccount for IRSA; empty with Pod Identity.
	IRSARoleARN string
	// Settings are the controller's environment (operator setting names:
	// CLUSTER_NAME, INTERRUPTION_QUEUE, ...), written in name order.
	Settings map[string]string
	// CPURequest and MemoryRequest size the container (also the limits for
	// memory); CPU_REQUESTS is derived from CPURequest.
	CPURequest, MemoryRequest string
	// RolloutToken changes the pod template when it changes (the CRD
	// bundle's hash), so the controller restarts on new APIs.
	RolloutToken string
}

// Name of every object (and of the container).
const Name = "joist"

// Ports of the controller.
const (
	MetricsPort     = 8080
	HealthProbePort = 8081
)

// RolloutAnnotation carries Spec.RolloutToken on the pod template.
const RolloutAnnotation = "joist.dev/crds-sha256"

func (s Spec) withDefaults() Spec {
	if s.Namespace == "" {
		s.Namespace = "kube-system"
	}
	if s.ServiceAccount == "" {
		s.ServiceAccount = Name
	}
	if s.Replicas == 0 {
		s.Replicas = 2
	}
	if s.CPURequest == "" {
		s.CPURequest = "1"
	}
	if s.MemoryRequest == "" {
		s.MemoryRequest = "1Gi"
	}
	return s
}

// Validate names the wrong field and the fix.
func (s Spec) Validate() error {
	if s.Image == "" {
		return fmt.Errorf("image is empty: set image to the controller image")
	}
	if s.Settings["CLUSTER_NAME"] == "" {
		return fmt.Errorf("CLUSTER_NAME is empty: set cluster_name")
	}
	for k := range s.Settings {
		if k == "" || strings.ToUpper(k) != k || strings.ContainsAny(k, " =") {
			return fmt.Errorf("setting %q is not an environment variable name (UPPER_CASE)", k)
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
