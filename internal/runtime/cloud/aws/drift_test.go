package aws_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
)

func TestDriftOnNodeClassHashSubnetsAndSecurityGroups(t *testing.T) {
	ctx := testContext(t)
	nc, claim := launchC5(t, "drift")
	t.Cleanup(func() { _ = prov.Delete(ctx, claim) })
	if reason, err := prov.IsDrifted(ctx, claim); err != nil || reason != "" {
		t.Fatalf("fresh claim: %q, %v", reason, err)
	}

	// A hash from another hash version is not compared (re-stamping, not drift).
	old := claim.DeepCopy()
	old.Annotations[v1.EC2NodeClassHashAnnotationKey] = "123"
	old.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] = "older"
	if reason, _ := prov.IsDrifted(ctx, old); reason != "" {
		t.Errorf("hash of another version drifted: %q", reason)
	}
	old.Annotations[v1.EC2NodeClassHashVersionAnnotationKey] = claim.Annotations[v1.EC2NodeClassHashVersionAnnotationKey]
	if reason, _ := prov.IsDrifted(ctx, old); reason != awsprovider.DriftNodeClass {
		t.Errorf("changed static hash: %q, want %s", reason, awsprovider.DriftNodeClass)
	}

	// Resolved subnets and security groups no longer matching the instance.
	subnetOnly := nc.Status.Subnets[:0:0]
	for _, s := range nc.Status.Subnets {
		if s.Zone != claim.Labels[corev1.LabelTopologyZone] {
			subnetOnly = append(subnetOnly, s)
		}
	}
	saved := nc.Status.DeepCopy()
	nc.Status.Subnets = subnetOnly
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if reason, _ := prov.IsDrifted(ctx, claim); reason != awsprovider.DriftSubnet {
		t.Errorf("instance subnet no longer selected: %q, want %s", reason, awsprovider.DriftSubnet)
	}
	nc.Status = *saved
	nc.Status.SecurityGroups = nc.Status.SecurityGroups[:1]
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if reason, _ := prov.IsDrifted(ctx, claim); reason != awsprovider.DriftSecurityGroup {
		t.Errorf("security groups changed: %q, want %s", reason, awsprovider.DriftSecurityGroup)
	}
}
