package aws_test

import (
	"strings"
	"testing"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// A windows2022@latest node class resolves the Windows Server 2022 Core EKS
// image through its SSM parameter, offers x86_64 types only, labelled
// kubernetes.io/os=windows with the 2022 build, and launches an instance
// whose PowerShell user data calls Start-EKSBootstrap.ps1 with the node's
// labels, taints and max pods (the kubelet itself reports the OS and build).
func TestWindowsNodeClassResolvesFiltersAndLaunches(t *testing.T) {
	ctx := testContext(t)
	var image string
	for _, r := range sim.EC2.Images() {
		if r.Family == "windows2022" {
			image = r.ImageID
		}
	}
	if image == "" {
		t.Fatal("awssim publishes no windows2022 image")
	}
	nc := readyNodeClass(t, prov, testenv.NodeClass("windows2022", cluster, "windows2022@latest"))
	if len(nc.Status.AMIs) != 1 || nc.Status.AMIs[0].ID != image {
		t.Fatalf("status AMIs = %+v, want only the windows2022 image %s", nc.Status.AMIs, image)
	}
	types, err := prov.InstanceTypes().List(ctx, nc, []string{"us-west-2a", "us-west-2b", "us-west-2c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(types) == 0 {
		t.Fatal("no instance type for the Windows node class")
	}
	for _, it := range types {
		if it.Labels[corev1.LabelOSStable] != "windows" || it.Labels[corev1.LabelWindowsBuild] != "10.0.20348" || it.Labels[corev1.LabelArchStable] != "amd64" {
			t.Fatalf("%s: os %q, build %q, arch %q; want windows, 10.0.20348, amd64", it.Name,
				it.Labels[corev1.LabelOSStable], it.Labels[corev1.LabelWindowsBuild], it.Labels[corev1.LabelArchStable])
		}
		if pods := it.Capacity[corev1.ResourcePods]; pods.Value() != 110 {
			t.Fatalf("%s: %d pods, want Windows' 110", it.Name, pods.Value())
		}
	}

	claim := testenv.NodeClaim("windows", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	claim.Spec.Taints = []corev1.Taint{{Key: "os", Value: "windows", Effect: corev1.TaintEffectNoSchedule}}
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })
	if got.Labels[corev1.LabelOSStable] != "windows" || got.Labels[corev1.LabelWindowsBuild] != "10.0.20348" {
		t.Errorf("claim labels os %q, build %q", got.Labels[corev1.LabelOSStable], got.Labels[corev1.LabelWindowsBuild])
	}
	id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	inst, ud, ok := sim.EC2.Instance(id)
	if !ok {
		t.Fatalf("instance %s not in the simulator", id)
	}
	if inst.Platform != ec2types.PlatformValuesWindows || *inst.ImageId != image {
		t.Errorf("instance platform %q image %s; want windows from %s", inst.Platform, *inst.ImageId, image)
	}
	for _, want := range []string{
		"<powershell>", `Start-EKSBootstrap.ps1`, "-EKSClusterName '" + cluster + "'",
		"--node-labels=", "karpenter.sh/nodepool=general",
		"--register-with-taints=", "os=windows:NoSchedule", "karpenter.sh/unregistered:NoExecute", "--max-pods=110",
	} {
		if !strings.Contains(ud, want) {
			t.Errorf("user data lacks %q:\n%s", want, ud)
		}
	}
}

// Windows Server 2025 images exist for Kubernetes 1.35 and later only.
func TestWindows2025NeedsKubernetes135(t *testing.T) {
	s := settings()
	s.KubernetesVersion = "1.34"
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("windows2025-old", cluster, "windows2025@latest")
	if _, err := p.AMIs().List(testContext(t), nc); err == nil || !strings.Contains(err.Error(), "1.35") {
		t.Fatalf("windows2025 on 1.34: err = %v, want one naming 1.35", err)
	}
}
