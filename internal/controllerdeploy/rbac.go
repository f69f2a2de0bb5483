package controllerdeploy

import (
	rbacv1 "k8s.io/api/rbac/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// clusterRules are what the runtime's controllers do cluster-wide, each
// rule with the part of the runtime that needs it.
var clusterRules = []rbacv1.PolicyRule{
	// NodePools: provisioning reads them; readiness, counter and hash
	// controllers write status and annotations.
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodepools"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodepools/status"}, Verbs: []string{"patch", "update"}},
	// NodeClaims: the provisioner creates them; lifecycle, disruption,
	// termination, interruption and garbage collection update and delete.
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodeclaims"}, Verbs: []string{"get", "list", "watch", "create", "patch", "update", "delete"}},
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodeclaims/status"}, Verbs: []string{"patch", "update"}},
	// NodeOverlays: their controller reads them and reports validation and
	// conflicts on their status.
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodeoverlays"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"karpenter.sh"}, Resources: []string{"nodeoverlays/status"}, Verbs: []string{"patch", "update"}},
	// EC2NodeClasses: the node class controller resolves and reports status,
	// and holds a finalizer.
	{APIGroups: []string{"karpenter.k8s.aws"}, Resources: []string{"ec2nodeclasses"}, Verbs: []string{"get", "list", "watch", "patch", "update"}},
	{APIGroups: []string{"karpenter.k8s.aws"}, Resources: []string{"ec2nodeclasses/status"}, Verbs: []string{"patch", "update"}},
	// Nodes: registration labels, taints and finalizers; termination deletes.
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch", "update", "delete"}},
	// Pods: cluster state and the scheduler simulation read them; drain
	// evicts; stuck terminating pods are deleted.
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
	// Scheduling simulation inputs: claims, volumes and storage classes for
	// volume topology, namespaces for affinity namespaceSelectors,
	// LimitRanges for the requests of DaemonSet pods, owners, disruption
	// budgets.
	{APIGroups: []string{""}, Resources: []string{"persistentvolumes", "persistentvolumeclaims", "namespaces", "limitranges", "replicationcontrollers"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes", "volumeattachments"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "replicasets", "statefulsets"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"get", "list", "watch"}},
	// The kube-dns service's cluster IP is nodes' default cluster DNS and
	// tells the cluster's IP family (read once at start).
	{APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{"kube-dns"}, Verbs: []string{"get"}},
	// Leases cluster-wide, read-only: at start the controller refuses to
	// run while another Karpenter-API controller holds its leader-election
	// Lease in another namespace.
	{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list"}},
	// Events for users (events.k8s.io, and core for older readers).
	{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
}

// LeaderElectionLease is the controller's leader-election Lease unless
// its LEADER_ELECTION_NAME setting names another (the operator's default,
// as in Karpenter).
const LeaderElectionLease = "karpenter-leader-election"

// LeaseName is the Lease the controller elects its leader on.
func (s Spec) LeaseName() string {
	if n := s.Settings["LEADER_ELECTION_NAME"]; n != "" {
		return n
	}
	return LeaderElectionLease
}

// namespaceRules are the leader-election Lease in the controller's
// namespace, as Karpenter's chart grants them: it may write only its own
// Lease (lease is its name). Create cannot be limited to a name in RBAC:
// the name of an object being created is not part of the request's
// attributes, so it stays unscoped.
func namespaceRules(lease string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "watch"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{lease}, Verbs: []string{"patch", "update"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		// the cluster-wide disruption controls, read on every disruption pass
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{v1.DisruptionSettingsConfigMap}, Verbs: []string{"get"}},
	}
}
