package v1

import (
	"strings"
	"testing"
)

// restrictedLabelCases are label keys with whether users may set them and,
// if not, a fragment of the error.
var restrictedLabelCases = []struct {
	Key     string
	Allowed bool
	Message string
}{
	{"team", true, ""},
	{"example.com/team", true, ""},
	{"topology.kubernetes.io/zone", true, ""},
	{"kubernetes.io/arch", true, ""},
	{"node.kubernetes.io/instance-type", true, ""},
	{"beta.kubernetes.io/instance-type", true, ""},
	{"failure-domain.beta.kubernetes.io/zone", true, ""},
	{"node-role.kubernetes.io/worker", true, ""},
	{"node.kubernetes.io/custom", true, ""},
	{"example.node-restriction.kubernetes.io/x", true, ""},
	{"kops.k8s.io/instancegroup", true, ""},
	{"karpenter.sh/capacity-type", true, ""},
	{"karpenter.k8s.aws/instance-category", true, ""},
	{"karpenter.k8s.aws/instance-family", true, ""},
	{"karpenter.k8s.aws/capacity-reservation-id", true, ""},
	{"topology.k8s.aws/zone-id", true, ""},
	{"kubernetes.io/hostname", false, `label "kubernetes.io/hostname" is restricted`},
	{"karpenter.sh/nodepool", false, `label "karpenter.sh/nodepool" is restricted`},
	{"karpenter.sh/foo", false, `label domain "karpenter.sh" is restricted`},
	{"sub.karpenter.sh/foo", false, `label domain "karpenter.sh" is restricted`},
	{"karpenter.k8s.aws/foo", false, `label domain "karpenter.k8s.aws" is restricted`},
	{"kubernetes.io/foo", true, ""},
	{"topology.kubernetes.io/foo", true, ""},
	{"k8s.io/foo", true, ""},
	{"cloud.k8s.io/foo", true, ""},
}

func TestIsRestrictedLabel(t *testing.T) {
	for _, tc := range restrictedLabelCases {
		err := IsRestrictedLabel(tc.Key)
		switch {
		case tc.Allowed && err != nil:
			t.Errorf("%s: refused with %v, want allowed", tc.Key, err)
		case !tc.Allowed && err == nil:
			t.Errorf("%s: allowed, want refused", tc.Key)
		case !tc.Allowed && !strings.Contains(err.Error(), tc.Message):
			t.Errorf("%s: error %q does not contain %q", tc.Key, err, tc.Message)
		}
	}
}

func TestEveryWellKnownLabelIsAllowed(t *testing.T) {
	for _, key := range WellKnownLabels {
		if key == NodePoolLabelKey {
			continue // well-known for scheduling, but only the runtime sets it
		}
		if err := IsRestrictedLabel(key); err != nil {
			t.Errorf("well-known label %s refused: %v", key, err)
		}
	}
}

func TestIsRestrictedNodeLabel(t *testing.T) {
	for key, want := range map[string]bool{
		NodePoolLabelKey:         false,
		CapacityTypeLabelKey:     false,
		"example.com/team":       false,
		"kubernetes.io/foo":      false,
		"kubernetes.io/hostname": true,
		"karpenter.sh/foo":       true,
	} {
		if got := IsRestrictedNodeLabel(key); got != want {
			t.Errorf("IsRestrictedNodeLabel(%s) = %v, want %v", key, got, want)
		}
	}
}
