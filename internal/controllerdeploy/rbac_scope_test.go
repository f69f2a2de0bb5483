package controllerdeploy

import (
	"fmt"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

// unscopedWrites are the resources the controller may update, patch or
// delete whatever their name, each with why it must. Any other write must
// name its objects (resourceNames).
//
// Where the rendered RBAC differs from Karpenter's chart
// (karpenter-provider-aws v1.15 charts/karpenter/templates: clusterrole.yaml,
// clusterrole-core.yaml, role.yaml):
//
//	resource                      Karpenter's chart                          Joist
//	nodeclaims/status             create, delete, update, patch              update, patch (no create or delete on a subresource)
//	nodepools                     update, patch (read: get, list, watch)     the same verbs in one rule
//	pods                          delete (patch with podDeletionCostManagement) delete only (no pod deletion cost feature)
//	events.k8s.io events          none                                       create, patch (the events API the recorder writes)
//	core events                   create, patch; get, list, watch            create, patch (never read)
//	services kube-dns             get, in a kube-system Role                 get, in the ClusterRole, resourceNames kube-dns
//	leases                        get, watch; create; update, patch named    the same (named LEADER_ELECTION_NAME when set)
//	                              karpenter-leader-election
//	capacitybuffers, podtemplates, read and status writes                    none (not implemented)
//	VPAs, DRA resources
var unscopedWrites = map[string]string{
	"karpenter.sh/nodepools":                  "readiness, counter and hash controllers annotate every NodePool (Karpenter's chart grants the same)",
	"karpenter.sh/nodepools/status":           "every NodePool's conditions and resource counts are the controller's to report (as in Karpenter)",
	"karpenter.sh/nodeclaims":                 "the controller owns every NodeClaim: lifecycle, disruption and termination update and delete them by generated names (as in Karpenter)",
	"karpenter.sh/nodeclaims/status":          "every NodeClaim's status is the controller's to write (as in Karpenter)",
	"karpenter.sh/nodeoverlays/status":        "the overlay controller reports validation and conflicts on every NodeOverlay (as in Karpenter)",
	"karpenter.k8s.aws/ec2nodeclasses":        "the node class controller holds a finalizer and hash annotations on every EC2NodeClass (as in Karpenter)",
	"karpenter.k8s.aws/ec2nodeclasses/status": "every EC2NodeClass's resolution is the controller's to report (as in Karpenter)",
	"/nodes":               "registration, taints and finalizers on the nodes it launched, whose names EC2 picks; termination deletes them (as in Karpenter)",
	"/pods":                "stuck terminating pods on a node being terminated are deleted, in any namespace (as in Karpenter)",
	"/events":              "event series are patched to count repeats (as in Karpenter)",
	"events.k8s.io/events": "event series are patched to count repeats; the events API twin of core events",
}

// writeVerbs change or remove existing objects; create is not among them:
// RBAC cannot scope it by name.
var writeVerbs = []string{"update", "patch", "delete", "deletecollection", "*"}

// TestEveryWriteIsScoped renders the controller's RBAC and checks every
// rule of every ClusterRole and Role: a verb that changes or deletes
// existing objects must name them (resourceNames) or be on a resource in
// unscopedWrites. The leader-election Lease is the case in point: the
// controller may write its own Lease, not every Lease in its namespace.
func TestEveryWriteIsScoped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease string
		spec  Spec
	}{
		{"default", LeaderElectionLease, Spec{Image: "img", Settings: map[string]string{"CLUSTER_NAME": "demo"}}},
		{"renamed lease", "joist-leader", Spec{Image: "img", Namespace: "joist", Settings: map[string]string{"CLUSTER_NAME": "demo", "LEADER_ELECTION_NAME": "joist-leader"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Objects(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			roles := 0
			for _, o := range objs {
				var rules []rbacv1.PolicyRule
				switch o.GetKind() {
				case "ClusterRole":
					cr := &rbacv1.ClusterRole{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cr); err != nil {
						t.Fatal(err)
					}
					rules = cr.Rules
				case "Role":
					r := &rbacv1.Role{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, r); err != nil {
						t.Fatal(err)
					}
					rules = r.Rules
				default:
					continue
				}
				roles++
				for _, rule := range rules {
					for _, problem := range unscopedWriteProblems(rule) {
						t.Errorf("%s %s: %s", o.GetKind(), o.GetName(), problem)
					}
					if slices.Contains(rule.Resources, "leases") && len(rule.ResourceNames) > 0 && !slices.Equal(rule.ResourceNames, []string{tc.lease}) {
						t.Errorf("%s %s: Lease writes name %v, want the leader-election Lease %q", o.GetKind(), o.GetName(), rule.ResourceNames, tc.lease)
					}
				}
				if o.GetKind() == "Role" && !allows(rules, "coordination.k8s.io", "leases", "get", "create", "update") {
					t.Errorf("Role %s does not let the controller get, create and update its Lease", o.GetName())
				}
			}
			if roles < 2 {
				t.Fatalf("rendered %d roles, want a ClusterRole and a Role", roles)
			}
		})
	}
}

// unscopedWriteProblems lists the writes of rule that name no object and
// are not on a resource unscopedWrites justifies.
func unscopedWriteProblems(rule rbacv1.PolicyRule) []string {
	if len(rule.ResourceNames) > 0 {
		return nil
	}
	var out []string
	for _, v := range rule.Verbs {
		if !slices.Contains(writeVerbs, v) {
			continue
		}
		for _, g := range rule.APIGroups {
			for _, r := range rule.Resources {
				if _, ok := unscopedWrites[g+"/"+r]; !ok {
					out = append(out, fmt.Sprintf("%s on %s/%s is not limited by resourceNames and has no justification in unscopedWrites", v, g, r))
				}
			}
		}
	}
	return out
}

// TestLeaderElectionLeaseIsTheOperatorsDefault: the Role names the Lease
// the controller elects on when LEADER_ELECTION_NAME is not set.
func TestLeaderElectionLeaseIsTheOperatorsDefault(t *testing.T) {
	s, err := settings.ParseSettings(nil, func(k string) string {
		if k == "CLUSTER_NAME" {
			return "demo"
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.LeaderElectionName != LeaderElectionLease {
		t.Errorf("the controller elects on Lease %q by default; the Role grants writes to %q", s.LeaderElectionName, LeaderElectionLease)
	}
}
