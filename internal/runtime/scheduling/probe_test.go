package scheduling

import (
	"math/rand"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestProbeGeneric(t *testing.T) {
	its := catalogFixture(t)
	in := Input{NodePools: []*NodePool{benchPool(its)}, Pods: genericPods(5000, rand.New(rand.NewSource(42)))}
	plan, _ := Solve(in)
	hist := map[string]int{}
	var usedCPU, allocCPU, usedMem, allocMem int64
	for _, c := range plan.NewClaims {
		hist[c.InstanceTypes[0].Type.Name]++
		a := c.InstanceTypes[0].Type.Allocatable
		allocCPU += a.Cpu().MilliValue()
		allocMem += a.Memory().Value()
		usedCPU += c.Requests.Cpu().MilliValue()
		usedMem += c.Requests.Memory().Value()
	}
	var names []string
	for n := range hist {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("%s %d", n, hist[n])
	}
	t.Logf("cpu util %.3f mem util %.3f", float64(usedCPU)/float64(allocCPU), float64(usedMem)/float64(allocMem))
	// best per-resource types
	type s struct {
		n        string
		pc, pm   float64
	}
	var ss []s
	for _, it := range its {
		p := 1e9
		for _, o := range it.Offerings {
			if o.CapacityType == "on-demand" && o.Price < p {
				p = o.Price
			}
		}
		ss = append(ss, s{it.Name, p / float64(it.Allocatable.Cpu().MilliValue()) * 1000, p / float64(it.Allocatable.Memory().Value()) * (1 << 30)})
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].pc+ss[i].pm/2 < ss[j].pc+ss[j].pm/2 })
	for _, x := range ss[:12] {
		t.Logf("%s $/core %.4f $/GiB %.4f", x.n, x.pc, x.pm)
	}
	demand := corev1.ResourceList{}
	for _, p := range in.Pods {
		addList(demand, PodRequests(p))
	}
	t.Logf("demand %v", demand)
}
