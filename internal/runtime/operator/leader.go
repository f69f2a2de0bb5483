package operator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

// refuseForeignLeader returns an error when another controller speaking the
// Karpenter API holds a live leader-election Lease of the same name in
// another namespace: it elects its own leader, so both would provision and
// consolidate, and delete each other's launch templates. It reads the
// Leases with a field selector on the name (a cluster-wide list).
func refuseForeignLeader(ctx context.Context, restCfg *rest.Config, s *Settings, now time.Time) error {
	cs, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return err
	}
	// Without leader election the name may be unset; the other controller
	// then most likely uses the default.
	name := s.LeaderElectionName
	if name == "" {
		name = settings.DefaultLeaderElectionName
	}
	leases, err := cs.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil {
		return fmt.Errorf("listing leader-election Leases named %s to find another Karpenter-API controller: %w", name, err)
	}
	if l := settings.ForeignLeader(leases.Items, ownNamespace(s.LeaderElectionNamespace, os.ReadFile), name, now); l != nil {
		return settings.ForeignLeaderError(l)
	}
	return nil
}

// serviceAccountNamespace is where a pod reads its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// ownNamespace is the namespace of the controller's own Lease: the setting,
// else the pod's namespace, where leader election then puts it. Without it
// the other replicas' Lease would count as another controller's.
func ownNamespace(setting string, readFile func(string) ([]byte, error)) string {
	if setting != "" {
		return setting
	}
	b, err := readFile(serviceAccountNamespace)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
