package scheduling_test

import (
	"fmt"
	"math/rand"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/hack/benchfixture"
	. "github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling/oracle"
)

// The benchmark mixes follow Karpenter's scheduling benchmark: 400 instance
// types, requests from benchfixture's sizes, seeded RNG 42.

var (
	benchCPU = benchfixture.PodCPU
	benchMem = benchfixture.PodMemory
)

func randomSized(r *rand.Rand, name string, opts ...podOpt) *corev1.Pod {
	return mkPod(name, benchCPU[r.Intn(len(benchCPU))], benchMem[r.Intn(len(benchMem))], opts...)
}

// diversePods is Karpenter's benchmark mix (makeDiversePods), from the
// generator the side-by-side harness (hack/karpbench) gives both solvers.
func diversePods(n int, r *rand.Rand) []*corev1.Pod { return benchfixture.DiversePods(n, r) }

func genericPods(n int, r *rand.Rand) []*corev1.Pod {
	out := make([]*corev1.Pod, n)
	for i := range out {
		out[i] = randomSized(r, fmt.Sprintf("generic-%d", i), withLabels("app", "generic"))
	}
	return out
}

func benchPool(its []*InstanceType) *NodePool { return benchfixture.NodePool(its) }

// deploymentsInput: 30 deployments of mixed sizes, two daemonsets and three
// NodePools of different weights (a small high-weight arm64 pool with a
// limit, a general pool, a low-weight spot pool).
func deploymentsInput(n int, r *rand.Rand, its []*InstanceType) Input {
	high := mkPool("arm-reserved", its, expr(labelArch, corev1.NodeSelectorOpIn, "arm64"), expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeOnDemand))
	high.Weight = 100
	high.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("256")}
	general := mkPool("general", its, expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeOnDemand))
	general.Weight = 50
	spot := mkPool("spot", its, expr(labelCapacityType, corev1.NodeSelectorOpIn, CapacityTypeSpot))
	in := Input{NodePools: []*NodePool{high, general, spot}}
	in.DaemonSets = []*corev1.Pod{mkPod("ds-logs", "100m", "128Mi"), mkPod("ds-net", "50m", "64Mi")}
	per := n / 30
	for d := 0; d < 30; d++ {
		cpu, mem := benchCPU[r.Intn(len(benchCPU))], benchMem[r.Intn(len(benchMem))]
		app := fmt.Sprintf("deploy-%d", d)
		opts := []podOpt{withLabels("app", app), withOwner(app)}
		switch d % 5 {
		case 1:
			opts = append(opts, withSpread(labelZone, 1, corev1.DoNotSchedule, "app", app))
		case 2:
			opts = append(opts, withNodeSelector(labelArch, "amd64"))
		case 3:
			opts = append(opts, withSpread(labelHostname, 2, corev1.ScheduleAnyway, "app", app))
		}
		count := per
		if d < n%30 {
			count++
		}
		in.Pods = append(in.Pods, pods(count, app, cpu, mem, opts...)...)
	}
	return in
}

func runBench(b *testing.B, build func() Input, lpBound bool) {
	in := build()
	var plan *Plan
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if plan, err = Solve(in); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	secs := b.Elapsed().Seconds() / float64(b.N)
	// Process CPU time (GC included) is reported too: wall time on a
	// shared machine says more about the neighbours than about the solver.
	cpuSecs := (cpuTime() - cpu0).Seconds() / float64(b.N)
	b.ReportMetric(float64(len(in.Pods))/secs, "pods/s")
	b.ReportMetric(cpuSecs*1000, "cpu-ms/op")
	b.ReportMetric(float64(len(plan.NewClaims)), "nodes")
	b.ReportMetric(plan.Cost(), "$/h")
	b.ReportMetric(float64(len(plan.Errors)), "unplaced")
	if lpBound {
		its := withOnDemandOnly(in.NodePools[0].InstanceTypes)
		demand := corev1.ResourceList{}
		for _, p := range in.Pods {
			AddResources(demand, PodRequests(p))
		}
		b.ReportMetric(plan.Cost()/oracle.LPLowerBound(its, demand), "xLP")
		b.ReportMetric(plan.Cost()/oracle.LPLowerBoundForPods(its, in.Pods), "xLPfit")
	}
}

// withOnDemandOnly returns copies of its with their on-demand offerings
// only: the benchmarks' pool buys nothing else.
func withOnDemandOnly(its []*InstanceType) []*InstanceType {
	out := make([]*InstanceType, 0, len(its))
	for _, it := range its {
		cp := *it
		cp.Offerings = nil
		for _, o := range it.Offerings {
			if o.CapacityType == CapacityTypeOnDemand {
				cp.Offerings = append(cp.Offerings, o)
			}
		}
		out = append(out, &cp)
	}
	return out
}

func BenchmarkDiverse(b *testing.B) {
	its := catalogFixture(b)
	for _, n := range []int{100, 1000, 5000, 20000, 50000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: diversePods(n, rand.New(rand.NewSource(42)))}
			}, false)
		})
	}
}

func BenchmarkGeneric(b *testing.B) {
	its := catalogFixture(b)
	for _, n := range []int{100, 1000, 5000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: genericPods(n, rand.New(rand.NewSource(42)))}
			}, true)
		})
	}
}

// BenchmarkGenericKarpenter is the generic mix exactly as Karpenter's
// benchmark generator makes it (makeGenericPods: a random "my-label" value
// drawn before each pod's requests), on the real catalog with burstable
// types at full CPU, as Karpenter counts them: the row to compare with
// Karpenter's own plan of the same pods (hack/karpbench -mix generic).
func BenchmarkGenericKarpenter(b *testing.B) {
	its := catalogFixture(b)
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: benchfixture.GenericPods(n, rand.New(rand.NewSource(42)))}
			}, true)
		})
	}
}

// rootVolumeHourly is what the default 20 GiB gp3 root volume of an AL2023
// node costs per hour at us-east-1's list price ($0.08 per GB-month, 730
// hours a month): the cloud provider adds it to every offering's price.
const rootVolumeHourly = 20 * 0.08 / 730

// withPerNodeCost returns copies of its whose offerings cost perNode more.
func withPerNodeCost(its []*InstanceType, perNode float64) []*InstanceType {
	out := make([]*InstanceType, 0, len(its))
	for _, it := range its {
		cp := *it
		cp.Offerings = make([]Offering, len(it.Offerings))
		for i, o := range it.Offerings {
			o.Price += perNode
			cp.Offerings[i] = o
		}
		out = append(out, &cp)
	}
	return out
}

// BenchmarkGenericRootVolume is Generic with each node's root volume in its
// price, as the AWS cloud provider prices offerings: $/h is the bill
// (instances and volumes), to compare with Generic's $/h plus its nodes ×
// rootVolumeHourly.
func BenchmarkGenericRootVolume(b *testing.B) {
	its := withPerNodeCost(catalogFixture(b), rootVolumeHourly)
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: genericPods(n, rand.New(rand.NewSource(42)))}
			}, false)
		})
	}
}

// BenchmarkGenericBaselineCPU is Generic with burstable types counted at
// their baseline CPU, as the AWS cloud provider describes them to a NodePool
// that does not opt in to their full CPU: Generic's small burstable nodes
// (a t3a.micro's 2 vCPU for $0.0094/h) are cheap only while their CPU is
// counted in full.
func BenchmarkGenericBaselineCPU(b *testing.B) {
	its := withBaselineCPU(catalogFixture(b))
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: genericPods(n, rand.New(rand.NewSource(42)))}
			}, false)
		})
	}
}

func BenchmarkDeployments(b *testing.B) {
	its := catalogFixture(b)
	for _, n := range []int{100, 1000, 5000, 20000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input { return deploymentsInput(n, rand.New(rand.NewSource(42)), its) }, false)
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExistingCluster: the diverse mix arriving in a cluster that
// already runs 1,000 nodes with 10 pods each (50 apps, some with hostname
// anti-affinity) — exercises running-pod topology counting and first-fit
// over existing capacity.
func BenchmarkExistingCluster(b *testing.B) {
	its := catalogFixture(b)
	zones := []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				r := rand.New(rand.NewSource(42))
				in := Input{NodePools: []*NodePool{benchPool(its)}, Pods: diversePods(n, r)}
				for i := 0; i < 1000; i++ {
					var bound []*corev1.Pod
					for j := 0; j < 10; j++ {
						app := fmt.Sprintf("running-%d", r.Intn(50))
						opts := []podOpt{withLabels("app", app)}
						if r.Intn(10) == 0 {
							opts = append(opts, withAntiAffinity(term(labelHostname, "app", app)))
						}
						bound = append(bound, mkPod(fmt.Sprintf("run-%d-%d", i, j), "500m", "1Gi", opts...))
					}
					in.Nodes = append(in.Nodes, mkNode(fmt.Sprintf("node-%04d", i), 8, 32, map[string]string{labelZone: zones[i%3], labelArch: "amd64", labelOS: "linux"}, bound...))
				}
				return in
			}, false)
		})
	}
}

// BenchmarkColocated: groups of three pods of random sizes that must share
// a node (each labelled with its group and requiring hostname affinity to
// it), so every group's first pod opens a claim sized for all three.
func BenchmarkColocated(b *testing.B) {
	its := catalogFixture(b)
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			runBench(b, func() Input {
				r := rand.New(rand.NewSource(42))
				var ps []*corev1.Pod
				for i := 0; i < n; i++ {
					g := fmt.Sprintf("g%d", i/3)
					ps = append(ps, randomSized(r, fmt.Sprintf("colocated-%d", i), withLabels("group", g), withPodAffinity(term(labelHostname, "group", g))))
				}
				return Input{NodePools: []*NodePool{benchPool(its)}, Pods: ps}
			}, false)
		})
	}
}
