package kubelet

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// karpenterNodeConfig is a NodeConfig in the shape Karpenter's AL2023
// bootstrap writes (cluster details trimmed to the name): everything in
// kubelet.config, taints as objects.
const karpenterNodeConfig = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

# Karpenter Generated NodeConfig
apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
metadata:
  creationTimestamp: null
spec:
  cluster:
    name: test-cluster
  containerd: {}
  instance:
    localStorage: {}
  kubelet:
    config:
      clusterDNS:
      - 10.100.0.10
      evictionHard:
        memory.available: 5%
      kubeReserved:
        cpu: 200m
      maxPods: 20
      registerWithTaints:
      - effect: NoExecute
        key: karpenter.sh/unregistered
      - effect: NoSchedule
        key: dedicated
        value: gpu
      systemReserved:
        cpu: 100m
        memory: 200Mi
    flags:
    - --node-labels="karpenter.sh/capacity-type=on-demand,karpenter.sh/nodepool=default"

--//--
`

func TestKubeletConfigOfANodeConfigShapesTheNode(t *testing.T) {
	jc, err := ParseUserData(karpenterNodeConfig)
	if err != nil {
		t.Fatal(err)
	}
	in := ec2types.Instance{
		InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: "m5.large", PrivateDnsName: aws.String("ip-10-0-0-1.us-west-2.compute.internal"),
		PrivateIpAddress: aws.String("10.0.0.1"), Architecture: ec2types.ArchitectureValuesX8664,
		Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-west-2a"), AvailabilityZoneId: aws.String("usw2-az1")},
	}
	node, err := Node(in, jc, "us-west-2", "v1.36.3", 0)
	if err != nil {
		t.Fatal(err)
	}
	wantTaints := []corev1.Taint{
		{Key: "karpenter.sh/unregistered", Effect: corev1.TaintEffectNoExecute},
		{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
	}
	if len(node.Spec.Taints) != 2 || !node.Spec.Taints[0].MatchTaint(&wantTaints[0]) || node.Spec.Taints[1] != wantTaints[1] {
		t.Errorf("taints = %v, want %v (registerWithTaints)", node.Spec.Taints, wantTaints)
	}
	if got := node.Status.Capacity[corev1.ResourcePods]; got.Value() != 20 {
		t.Errorf("pods capacity = %s, want 20 (maxPods)", got.String())
	}
	// m5.large: 2 vCPUs, 8 GiB of which its kernel sees all but 559 MiB.
	// kubeReserved cpu replaces the default, memory keeps it (20*11+255
	// MiB); systemReserved adds; 5% of memory replaces the 100 MiB
	// eviction default.
	memCap := int64(8192-559) << 20
	if got := node.Status.Capacity[corev1.ResourceMemory]; got.Value() != memCap {
		t.Errorf("memory capacity = %s, want 7633Mi (8 GiB less what m5.large nodes do not see)", got.String())
	}
	alloc := node.Status.Allocatable
	if cpu := alloc[corev1.ResourceCPU]; cpu.MilliValue() != 2000-200-100 {
		t.Errorf("allocatable cpu = %s, want 1700m", cpu.String())
	}
	wantMem := memCap - (20*11+255)<<20 - 200<<20 - memCap*5/100
	if mem := alloc[corev1.ResourceMemory]; mem.Value() != wantMem {
		t.Errorf("allocatable memory = %d, want %d", mem.Value(), wantMem)
	}
	if node.Labels["karpenter.sh/nodepool"] != "default" {
		t.Errorf("labels = %v, want the --node-labels flag's", node.Labels)
	}
}

func TestNodeImageDefaultsWithoutKubeletConfig(t *testing.T) {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
	alloc, err := allocatable(capacity, 8, 58, &JoinConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// 60+10+5+5+4*2 millicores; (58*11+255) MiB + 100 MiB; 10% of the disk.
	if cpu := alloc[corev1.ResourceCPU]; cpu.MilliValue() != 8000-88 {
		t.Errorf("cpu = %s", cpu.String())
	}
	if mem := alloc[corev1.ResourceMemory]; mem.Value() != 32<<30-(58*11+255+100)<<20 {
		t.Errorf("memory = %s", mem.String())
	}
	if s := alloc[corev1.ResourceEphemeralStorage]; s.Value() != 20<<30*9/10 {
		t.Errorf("ephemeral-storage = %s", s.String())
	}
	if _, err := allocatable(capacity, 8, 58, &JoinConfig{EvictionHard: map[string]string{"memory.available": "lots"}}); err == nil {
		t.Error("an unreadable eviction threshold was accepted")
	}
}

// Trunking-compatible types advertise their branch interfaces as pod ENIs,
// as the VPC resource controller does; others advertise none.
func TestNodeAdvertisesPodENIsOfTrunkingTypes(t *testing.T) {
	for typ, want := range map[string]int64{"m5.large": 9, "c5n.18xlarge": 107, "t3.large": 0} {
		in := ec2types.Instance{
			InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: ec2types.InstanceType(typ), PrivateDnsName: aws.String("ip-10-0-0-1.us-west-2.compute.internal"),
			PrivateIpAddress: aws.String("10.0.0.1"), Architecture: ec2types.ArchitectureValuesX8664,
			Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-west-2a"), AvailabilityZoneId: aws.String("usw2-az1")},
		}
		node, err := Node(in, &JoinConfig{}, "us-west-2", "v1.36.3", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := node.Status.Allocatable[ResourcePodENI]
		switch {
		case want == 0 && ok:
			t.Errorf("%s: pod-eni = %s, want none (not trunking-compatible)", typ, got.String())
		case want > 0 && got.Value() != want:
			t.Errorf("%s: allocatable pod-eni = %s, want %d", typ, got.String(), want)
		}
	}
}

// The node advertises one vpc.amazonaws.com/efa per EFA interface the
// instance has (as the EFA device plugin counts devices), none without.
func TestNodeAdvertisesTheInstancesEFADevices(t *testing.T) {
	in := ec2types.Instance{
		InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: "c6in.32xlarge", PrivateDnsName: aws.String("ip-10-0-0-1.us-west-2.compute.internal"),
		PrivateIpAddress: aws.String("10.0.0.1"), Architecture: ec2types.ArchitectureValuesX8664,
		Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-west-2a"), AvailabilityZoneId: aws.String("usw2-az1")},
	}
	for _, tc := range []struct {
		kinds []string
		want  int64
	}{{[]string{"interface"}, 0}, {[]string{"efa", "efa"}, 2}, {[]string{"interface", "efa-only"}, 1}} {
		in.NetworkInterfaces = nil
		for _, k := range tc.kinds {
			in.NetworkInterfaces = append(in.NetworkInterfaces, ec2types.InstanceNetworkInterface{InterfaceType: aws.String(k)})
		}
		node, err := Node(in, &JoinConfig{}, "us-west-2", "v1.36.3", 0)
		if err != nil {
			t.Fatal(err)
		}
		got := node.Status.Allocatable[ResourceEFA]
		if got.Value() != tc.want {
			t.Errorf("interfaces %v: allocatable efa %s, want %d", tc.kinds, got.String(), tc.want)
		}
	}
}

// windowsUserData is the shape of Karpenter's Windows user data: the
// node class's PowerShell, then the Start-EKSBootstrap.ps1 call.
const windowsUserData = `<powershell>
Write-Output 'it''s mine'
[string]$EKSBootstrapScriptFile = "$env:ProgramFiles\Amazon\EKS\Start-EKSBootstrap.ps1"
& $EKSBootstrapScriptFile -EKSClusterName 'test-cluster' -APIServerEndpoint 'https://example:6443' -Base64ClusterCA 'Q0E=' -KubeletExtraArgs '--node-labels=karpenter.sh/nodepool=win,team=a --register-with-taints=karpenter.sh/unregistered:NoExecute,os=windows:NoSchedule --max-pods=110' -DNSClusterIP '10.100.0.10'
</powershell>
`

func TestWindowsBootstrapShapesAWindowsNode(t *testing.T) {
	jc, err := ParseUserData(windowsUserData)
	if err != nil {
		t.Fatal(err)
	}
	if jc == nil || jc.Cluster != "test-cluster" || jc.MaxPods != 110 || jc.Labels["team"] != "a" || len(jc.Taints) != 2 || jc.Taints[1].Key != "os" {
		t.Fatalf("join configuration = %+v", jc)
	}
	in := ec2types.Instance{
		InstanceId: aws.String("i-0123456789abcdef0"), InstanceType: "m5.large", PrivateDnsName: aws.String("ip-10-0-0-1.us-west-2.compute.internal"),
		PrivateIpAddress: aws.String("10.0.0.1"), Architecture: ec2types.ArchitectureValuesX8664, Platform: ec2types.PlatformValuesWindows,
		Placement: &ec2types.Placement{AvailabilityZone: aws.String("us-west-2a"), AvailabilityZoneId: aws.String("usw2-az1")},
	}
	node, err := Node(in, jc, "us-west-2", "v1.36.3", 0)
	if err != nil {
		t.Fatal(err)
	}
	if node.Labels[corev1.LabelOSStable] != "windows" || node.Status.NodeInfo.OperatingSystem != "windows" {
		t.Errorf("os label %q, node info %q; want windows", node.Labels[corev1.LabelOSStable], node.Status.NodeInfo.OperatingSystem)
	}
	if len(node.Status.Addresses) != 3 || node.Status.Addresses[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}) {
		t.Errorf("addresses of an IPv4 node = %v", node.Status.Addresses)
	}
	in.Ipv6Address = aws.String("2600:1f14:6c3:1::1")
	if node, err = Node(in, jc, "us-west-2", "v1.36.3", 0); err != nil {
		t.Fatal(err)
	}
	if a := node.Status.Addresses; len(a) != 4 || a[0] != (corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: "2600:1f14:6c3:1::1"}) || a[1].Address != "10.0.0.1" {
		t.Errorf("addresses of a node with an IPv6 address = %v, want the IPv6 InternalIP first", a)
	}
	if WindowsBuild("windows2022") != "10.0.20348" || WindowsBuild("al2023") != "" {
		t.Error("Windows builds are wrong")
	}
	if jc, err := ParseUserData("<powershell>\nWrite-Output 'no bootstrap'\n</powershell>"); jc != nil || err != nil {
		t.Errorf("PowerShell without the bootstrap call joins %+v (%v), want no cluster", jc, err)
	}
}

// TestMachineIDSurvivesKwokTemplate: kwok's node stage writes nodeInfo's
// machineID into YAML unquoted; the value must read back as a string, or
// kwok fails every status update of the node and it never turns Ready.
// Instance IDs of digits only (about one in 3,000) once made such nodes.
func TestMachineIDSurvivesKwokTemplate(t *testing.T) {
	seen := map[string]bool{}
	for _, inst := range []string{"i-78513755307952274", "i-00000000000000000", "i-0abc12de34f567890"} {
		id := machineID(inst)
		var info corev1.NodeSystemInfo
		if err := yaml.Unmarshal([]byte("machineID: "+id), &info); err != nil || info.MachineID != id {
			t.Errorf("machine ID %q of %s read back from unquoted YAML as %q (%v)", id, inst, info.MachineID, err)
		}
		if len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Errorf("machine ID %q of %s: want 32 lowercase hex digits, as /etc/machine-id", id, inst)
		}
		if seen[id] {
			t.Errorf("machine ID %q repeats", id)
		}
		seen[id] = true
	}
}
