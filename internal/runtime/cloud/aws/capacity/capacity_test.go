package capacity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestKubeReservedCPUMillis(t *testing.T) {
	cases := map[int64]int64{1: 60, 2: 70, 3: 75, 4: 80, 8: 90, 16: 110, 64: 230, 96: 310}
	for vcpus, want := range cases {
		if got := KubeReservedCPUMillis(vcpus); got != want {
			t.Errorf("KubeReservedCPUMillis(%d) = %d, want %d", vcpus, got, want)
		}
	}
}

func TestENILimitedPods(t *testing.T) {
	// m5.large: 3 ENIs × (10-1) + 2 = 29; c5.18xlarge-ish 15 ENIs × 49 + 2 = 737.
	if got := ENILimitedPods(3, 10, 0, 0); got != 29 {
		t.Errorf("m5.large pods = %d, want 29", got)
	}
	if got := ENILimitedPods(15, 50, 0, 0); got != 737 {
		t.Errorf("pods = %d, want 737", got)
	}
	if got := ENILimitedPods(3, 10, 1, 0); got != 20 {
		t.Errorf("one reserved ENI: pods = %d, want 20", got)
	}
}

func TestPods(t *testing.T) {
	in := Instance{VCPUs: 2, MaxENIs: 3, IPv4PerENI: 10}
	ten, hundred := int32(10), int32(100)
	cases := []struct {
		name string
		k    Kubelet
		fam  Family
		want int64
	}{
		{"eni limited", Kubelet{}, AL2023, 29},
		{"maxPods", Kubelet{MaxPods: &hundred}, AL2023, 100},
		{"windows", Kubelet{}, Windows, 110},
		{"podsPerCore caps", Kubelet{PodsPerCore: &ten}, AL2023, 20},
		{"podsPerCore ignored by bottlerocket", Kubelet{PodsPerCore: &ten}, Bottlerocket, 29},
	}
	for _, c := range cases {
		if got := Pods(in, c.k, Options{Family: c.fam}); got != c.want {
			t.Errorf("%s: pods = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestComputeM5Large(t *testing.T) {
	res, err := Compute(Instance{VCPUs: 2, MemoryMiB: 8192, Arch: "amd64", MaxENIs: 3, IPv4PerENI: 10, EphemeralStorage: resource.MustParse("20Gi")}, Kubelet{}, Options{Family: AL2023})
	if err != nil {
		t.Fatal(err)
	}
	mem := res.Capacity[corev1.ResourceMemory]
	if want := int64(8192-615) * mib; mem.Value() != want {
		t.Errorf("memory capacity = %d, want %d", mem.Value(), want)
	}
	cpu := res.Allocatable[corev1.ResourceCPU]
	if cpu.MilliValue() != 1930 {
		t.Errorf("allocatable cpu = %dm, want 1930m", cpu.MilliValue())
	}
	// memory allocatable = 7577Mi - (11*29+255)Mi - 100Mi = 6903Mi
	am := res.Allocatable[corev1.ResourceMemory]
	if am.Value() != 6903*mib {
		t.Errorf("allocatable memory = %dMi, want 6903Mi", am.Value()/mib)
	}
	pods := res.Allocatable[corev1.ResourcePods]
	if pods.Value() != 29 {
		t.Errorf("pods = %d", pods.Value())
	}
	eph := res.Allocatable[corev1.ResourceEphemeralStorage]
	// 20Gi - 1Gi kube-reserved - 2Gi (10 %) eviction
	if eph.Value() != 17*1024*mib {
		t.Errorf("ephemeral = %d", eph.Value())
	}
}

func TestComputeOverrides(t *testing.T) {
	in := Instance{VCPUs: 4, MemoryMiB: 16384, Arch: "arm64", MaxENIs: 4, IPv4PerENI: 15, EphemeralStorage: resource.MustParse("100Gi")}
	res, err := Compute(in, Kubelet{
		KubeReserved:   map[string]string{"cpu": "200m"},
		SystemReserved: map[string]string{"memory": "1Gi"},
		EvictionHard:   map[string]string{"memory.available": "5%", "nodefs.available": "1Gi"},
	}, Options{Family: Bottlerocket})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Allocatable[corev1.ResourceCPU]; c.MilliValue() != 3800 {
		t.Errorf("cpu = %dm, want 3800m", c.MilliValue())
	}
	capMiB := MemoryCapacityMiB(16384, "arm64", DefaultVMMemoryOverheadPercent)
	evict := (capMiB*mib*5 + 99) / 100
	want := capMiB*mib - KubeReservedMemoryMiB(58)*mib - 1024*mib - evict
	if m := res.Allocatable[corev1.ResourceMemory]; m.Value() != want {
		t.Errorf("memory = %d, want %d", m.Value(), want)
	}
	if e := res.Allocatable[corev1.ResourceEphemeralStorage]; e.Value() != 98*1024*mib {
		t.Errorf("ephemeral = %d", e.Value())
	}
	if _, err := Compute(in, Kubelet{EvictionHard: map[string]string{"memory.available": "150%"}}, Options{}); err == nil {
		t.Error("150% eviction threshold should be rejected")
	}
	if _, err := Compute(in, Kubelet{KubeReserved: map[string]string{"memory": "-1Gi"}}, Options{}); err == nil {
		t.Error("negative reservation should be rejected")
	}
}
