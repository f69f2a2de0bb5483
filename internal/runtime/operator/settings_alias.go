package operator

import (
	"os"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

// The settings and their rules live in the pure package settings, which
// the provider also calls to check a joist_controller at plan time; these
// names keep the operator's callers unchanged.
type (
	// Settings are the controller's configuration.
	Settings = settings.Settings
	// FeatureGates are Karpenter's feature gates.
	FeatureGates = settings.FeatureGates
)

// ParseSettings reads args (flags) over env (getenv), validates the
// result, and defaults the leader-election namespace to the pod's own.
func ParseSettings(args []string, getenv func(string) string) (*Settings, error) {
	s, err := settings.ParseSettings(args, getenv)
	if s != nil && s.LeaderElectionNamespace == "" {
		s.LeaderElectionNamespace = podNamespace()
	}
	return s, err
}

// Usage lists every setting with its environment variable and default.
func Usage() string { return settings.Usage() }

// podNamespace is the namespace of the service account the pod runs as.
func podNamespace() string {
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		if ns := strings.TrimSpace(string(b)); ns != "" {
			return ns
		}
	}
	return "kube-system"
}
