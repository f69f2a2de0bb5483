package controllerdeploy

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1alpha1"
)

// apiObject matches a Kubernetes object literal in runtime source.
var apiObject = regexp.MustCompile(`&(corev1|appsv1|policyv1|storagev1|coordinationv1|v1|v1alpha1|awsv1)\.([A-Z]\w*?)(List)?\{`)

var groups = map[string]schema.GroupVersion{
	"corev1": {Version: "v1"}, "appsv1": {Group: "apps", Version: "v1"}, "policyv1": {Group: "policy", Version: "v1"},
	"storagev1": {Group: "storage.k8s.io", Version: "v1"}, "coordinationv1": {Group: "coordination.k8s.io", Version: "v1"},
	"v1": {Group: "karpenter.sh", Version: "v1"}, "v1alpha1": {Group: "karpenter.sh", Version: "v1alpha1"}, "awsv1": {Group: "karpenter.k8s.aws", Version: "v1"},
}

func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "ss"):
		return k + "es"
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ay"):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}

func allows(rules []rbacv1.PolicyRule, group, resource string, verbs ...string) bool {
	for _, v := range verbs {
		ok := false
		for _, r := range rules {
			if slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, v) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// TestRBACCoversTheRuntimesObjects scans the runtime for the API objects it
// handles and checks the ClusterRole lets it read them (and create
// evictions), so a controller added to the runtime cannot ship without its
// permissions.
func TestRBACCoversTheRuntimesObjects(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme, v1alpha1.AddToScheme, awsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	found := 0
	err := filepath.WalkDir("../runtime", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || strings.Contains(p, "awstest") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range apiObject.FindAllStringSubmatch(string(src), -1) {
			gv, kind := groups[m[1]], m[2]
			if !scheme.Recognizes(gv.WithKind(kind)) {
				continue // a field type, not an object
			}
			found++
			switch {
			case gv.Group == "policy" && kind == "Eviction":
				if !allows(clusterRules, "", "pods/eviction", "create") {
					t.Errorf("%s creates evictions; the ClusterRole does not allow pods/eviction create", p)
				}
			case gv.Group == "coordination.k8s.io":
				if !allows(namespaceRules(LeaderElectionLease), gv.Group, plural(kind), "get", "create", "update") {
					t.Errorf("%s uses %s; the Role does not allow it", p, kind)
				}
			case gv.Group == "" && kind == "ConfigMap":
				// The cluster-wide disruption controls: one ConfigMap in the
				// controller's namespace, read by name.
				if !allows(namespaceRules(LeaderElectionLease), "", "configmaps", "get") {
					t.Errorf("%s reads a ConfigMap; the Role does not allow getting it", p)
				}
			default:
				if !allows(clusterRules, gv.Group, plural(kind), "get", "list", "watch") {
					t.Errorf("%s uses %s.%s; the ClusterRole does not allow reading %s", p, kind, gv.Group, plural(kind))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 5 {
		t.Fatalf("found %d API objects in the runtime; the scan is broken", found)
	}
}

// TestClusterRoleReadsLeases: at start the controller lists the Leases of
// its leader-election name in every namespace to refuse running beside
// another Karpenter-API controller; the ClusterRole lets it read them,
// never write them (its own Lease's writes stay in the Role).
func TestClusterRoleReadsLeases(t *testing.T) {
	if !allows(clusterRules, "coordination.k8s.io", "leases", "get", "list") {
		t.Fatal("the ClusterRole does not allow get and list on leases")
	}
	for _, verb := range []string{"create", "update", "patch", "delete", "deletecollection"} {
		if allows(clusterRules, "coordination.k8s.io", "leases", verb) {
			t.Errorf("the ClusterRole allows %s on leases in every namespace", verb)
		}
	}
}
