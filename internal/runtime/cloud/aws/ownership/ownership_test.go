package ownership

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	owned := map[string]string{
		"kubernetes.io/cluster/blue": "owned", "eks:eks-cluster-name": "blue",
		"karpenter.sh/nodepool": "general", "karpenter.k8s.aws/ec2nodeclass": "default",
	}
	for _, c := range []struct {
		name    string
		tags    map[string]string
		cluster string
		want    map[string]string
		err     string
	}{
		{"owned", owned, "blue", map[string]string{"karpenter.sh/nodepool": "", "karpenter.k8s.aws/ec2nodeclass": "default"}, ""},
		{"another cluster", owned, "green", nil, `eks:eks-cluster-name tag is "blue", not "green"`},
		{"another node class", owned, "blue", map[string]string{"karpenter.k8s.aws/ec2nodeclass": "gpu"}, `ec2nodeclass tag is "default", not "gpu"`},
		{"missing key", owned, "blue", map[string]string{"topology.kubernetes.io/region": ""}, "no topology.kubernetes.io/region tag"},
		{"cluster tag not owned", map[string]string{"kubernetes.io/cluster/blue": "shared", "eks:eks-cluster-name": "blue"}, "blue", nil, `"shared", not "owned"`},
		{"only one cluster tag", map[string]string{"kubernetes.io/cluster/blue": "owned"}, "blue", nil, "no eks:eks-cluster-name tag"},
		{"untagged", nil, "blue", nil, "no eks:eks-cluster-name tag"},
	} {
		err := Check(c.tags, c.cluster, c.want)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
		}
	}
}

func TestMarked(t *testing.T) {
	for _, c := range []struct {
		name string
		tags map[string]string
		want bool
	}{
		{"cluster tag and pool", map[string]string{"kubernetes.io/cluster/blue": "owned", "karpenter.sh/nodepool": "web"}, true},
		{"name tag and pool", map[string]string{"eks:eks-cluster-name": "blue", "karpenter.sh/nodepool": "web"}, true},
		{"no pool", map[string]string{"kubernetes.io/cluster/blue": "owned", "eks:eks-cluster-name": "blue"}, false},
		{"another cluster", map[string]string{"kubernetes.io/cluster/green": "owned", "eks:eks-cluster-name": "green", "karpenter.sh/nodepool": "web"}, false},
		{"shared cluster tag", map[string]string{"kubernetes.io/cluster/blue": "shared", "karpenter.sh/nodepool": "web"}, false},
	} {
		if got := Marked(c.tags, "blue", "karpenter.sh/nodepool"); got != c.want {
			t.Errorf("%s: Marked = %v, want %v", c.name, got, c.want)
		}
	}
}
