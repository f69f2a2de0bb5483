package aws_test

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	ec2sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

func TestAMIAliasesResolveThroughSSM(t *testing.T) {
	for _, family := range []string{"al2023", "al2", "bottlerocket"} {
		t.Run(family, func(t *testing.T) {
			nc := readyNodeClass(t, prov, testenv.NodeClass("alias-"+family, cluster, family+"@latest"))
			var want []string
			for _, r := range sim.EC2.Images() {
				if r.Family == family {
					want = append(want, r.ImageID)
				}
			}
			var got []string
			for _, a := range nc.Status.AMIs {
				if !slices.Contains(got, a.ID) {
					got = append(got, a.ID)
				}
				// The AL2 GPU image also serves accelerator (Neuron) types.
				gpu := slices.ContainsFunc(a.Requirements, func(r corev1.NodeSelectorRequirement) bool {
					return (r.Key == v1.LabelInstanceGPUCount || r.Key == v1.LabelInstanceAcceleratorCount) && r.Operator == corev1.NodeSelectorOpExists
				})
				if accel := slices.ContainsFunc(sim.EC2.Images(), func(r ec2sim.ImageRelease) bool {
					return r.ImageID == a.ID && (r.Variant == "nvidia" || r.Variant == "neuron")
				}); accel != gpu {
					t.Errorf("AMI %s (%s): requires an accelerator = %v, but nvidia or neuron variant = %v", a.ID, a.Name, gpu, accel)
				}
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("resolved %v, want the newest %s images %v", got, family, want)
			}
		})
	}
}

func TestAMIVersionPinAndNewRelease(t *testing.T) {
	ctx := testContext(t)
	latest := readyNodeClass(t, prov, testenv.NodeClass("release-latest", cluster, "al2023@latest"))
	var seeded string
	for _, r := range sim.EC2.Images() {
		if r.Family == "al2023" && r.Architecture == "x86_64" && r.Variant == "standard" {
			seeded = r.Version
		}
	}
	pinned := readyNodeClass(t, prov, testenv.NodeClass("release-pinned", cluster, "al2023@"+seeded))
	before := amd64Standard(t, latest.Status.AMIs)
	if got := amd64Standard(t, pinned.Status.AMIs); got != before {
		t.Fatalf("pinned to the current release %s resolved %s, latest %s", seeded, got, before)
	}

	// A claim launched on the current AMI drifts once a newer one is published.
	claim, err := prov.Create(ctx, testenv.NodeClaim("release-claim", "default", latest.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, claim) })
	if claim.Status.ImageID != before {
		t.Fatalf("launched with %s, want %s", claim.Status.ImageID, before)
	}
	if reason, err := prov.IsDrifted(ctx, claim); err != nil || reason != "" {
		t.Fatalf("fresh claim drifted: %q, %v", reason, err)
	}

	kind := prov.NodeClasses()[0]
	hashBefore, releaseBefore := kind.HashAnnotations(latest), kind.Release(latest)
	release, err := sim.PublishImage("al2023", "x86_64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	prov.AMIs().Invalidate() // the AMI and SSM parameter caches timing out
	resolve(t, prov, latest)
	resolve(t, prov, pinned)
	// The release changes what the node class resolves, not its hash: the
	// disruption breaker and drift rollouts follow Release.
	if got := kind.HashAnnotations(latest); !maps.Equal(got, hashBefore) {
		t.Errorf("a new AMI release changed the node class's hash annotations from %v to %v", hashBefore, got)
	}
	if got := kind.Release(latest); got == releaseBefore || got == "" {
		t.Errorf("the node class's release is %q after a new AMI release, before it %q", got, releaseBefore)
	}
	if got := amd64Standard(t, latest.Status.AMIs); got != release.ImageID {
		t.Errorf("latest resolved %s after release %s was published", got, release.ImageID)
	}
	if got := amd64Standard(t, pinned.Status.AMIs); got != before {
		t.Errorf("pinned alias moved to %s", got)
	}
	if reason, err := prov.IsDrifted(ctx, claim); err != nil || reason != "AMIDrift" {
		t.Errorf("IsDrifted after a new release = %q, %v; want AMIDrift", reason, err)
	}
}

// amd64Standard is the AMI amd64 types without accelerators launch with.
func amd64Standard(t *testing.T, amis []awsv1.AMI) string {
	t.Helper()
	for _, a := range amis {
		arch, gpu := "", true
		for _, r := range a.Requirements {
			if r.Key == corev1.LabelArchStable {
				arch = r.Values[0]
			}
			if r.Key == v1.LabelInstanceGPUCount && r.Operator == corev1.NodeSelectorOpDoesNotExist {
				gpu = false
			}
		}
		if arch == v1.ArchitectureAmd64 && !gpu {
			return a.ID
		}
	}
	t.Fatalf("no amd64 standard AMI in %+v", amis)
	return ""
}
