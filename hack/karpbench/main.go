// Command karpbench solves the same pending pods with Karpenter v1.15's
// provisioning scheduler and with Joist's solver, on the real EC2 catalog
// the solver's benchmarks use, and prints both times and their ratio.
//
// Karpenter is driven as its own scheduling benchmark drives it (one
// NodePool with its limits, no existing nodes, a controller-runtime fake
// client with no objects), except that each run gets a fresh scheduler and
// only Solve is timed. Joist's time is one whole Solve: it builds its
// topology and catalog view inside. Both get the same NodePool: on-demand,
// 10,000,000 CPU and 10,000,000Gi. Karpenter counts each new claim's
// largest option against the limits (subtractMax), and the catalog's
// largest type has 32 TiB, so from about 337 claims it has no type left:
// the pods it leaves unplaced are counted in the table.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/hack/benchfixture"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

func main() {
	sizes := flag.String("pods", "1000,5000,20000", "comma-separated pod counts")
	mix := flag.String("mix", "diverse", "pod mix: diverse (makeDiversePods) or generic (makeGenericPods)")
	budget := flag.Duration("budget", 5*time.Second, "time to spend per solver and size after the first run (at least one run each)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (both solvers) to this file")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "karpbench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*sizes, *mix, *budget); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "karpbench:", err)
		os.Exit(1)
	}
}

type result struct {
	wall   time.Duration
	cpu    time.Duration
	runs   int
	nodes  int
	cost   float64
	failed int
	sample string // one unplaced pod and why
}

func run(sizes, mix string, budget time.Duration) error {
	its, err := benchfixture.InstanceTypes()
	if err != nil {
		return err
	}
	gen := map[string]func(int, *rand.Rand) []*corev1.Pod{"diverse": benchfixture.DiversePods, "generic": benchfixture.GenericPods}[mix]
	if gen == nil {
		return fmt.Errorf("unknown mix %q", mix)
	}
	karp := newKarpenter(its)
	tw := tabwriter.NewWriter(os.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mix\tpods\tkarpenter ms\tcpu-ms\truns\tnodes\t$/h\tunplaced\tjoist ms\tcpu-ms\truns\tnodes\t$/h\tunplaced\tratio\tcpu ratio\t\n")
	for _, field := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return fmt.Errorf("pods %q: %w", field, err)
		}
		// Both solvers get the same pods; each run gets a fresh copy, since
		// neither promises to leave its input alone.
		pods := gen(n, rand.New(rand.NewSource(42)))
		k, err := measure(budget, func() (result, error) { return karp.solve(context.Background(), deepCopy(pods)) })
		if err != nil {
			return fmt.Errorf("karpenter at %d pods: %w", n, err)
		}
		j, err := measure(budget, func() (result, error) { return joistSolve(its, deepCopy(pods)) })
		if err != nil {
			return fmt.Errorf("joist at %d pods: %w", n, err)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%d\t%d\t%.2f\t%d\t%.1f\t%.1f\t%d\t%d\t%.2f\t%d\t%.0fx\t%.0fx\t\n", mix, n,
			ms(k.wall), ms(k.cpu), k.runs, k.nodes, k.cost, k.failed, ms(j.wall), ms(j.cpu), j.runs, j.nodes, j.cost, j.failed,
			float64(k.wall)/float64(j.wall), float64(k.cpu)/float64(j.cpu))
		tw.Flush()
		for _, r := range []struct {
			name string
			result
		}{{"karpenter", k}, {"joist", j}} {
			if r.sample != "" {
				fmt.Fprintf(os.Stderr, "%s left %d pods unplaced at %d pods, e.g. %s\n", r.name, r.failed, n, r.sample)
			}
		}
	}
	fmt.Println("\nms: median wall time of one solve; cpu-ms: median process CPU time of one solve (all goroutines, GC included);")
	fmt.Println("ratio, cpu ratio: Karpenter's median over Joist's, same process, same input.")
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func deepCopy(pods []*corev1.Pod) []*corev1.Pod {
	out := make([]*corev1.Pod, len(pods))
	for i, p := range pods {
		out[i] = p.DeepCopy()
	}
	return out
}

// measure runs solve at least once and until budget is spent (at most 25
// runs), and returns the median wall and CPU times with the first run's
// plan.
func measure(budget time.Duration, solve func() (result, error)) (result, error) {
	var first result
	var walls, cpus []time.Duration
	start := time.Now()
	for len(walls) == 0 || (time.Since(start) < budget && len(walls) < 25) {
		r, err := solve()
		if err != nil {
			return result{}, err
		}
		if len(walls) == 0 {
			first = r
		}
		walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
	}
	first.wall, first.cpu, first.runs = median(walls), median(cpus), len(walls)
	return first, nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// timed runs f and returns its wall time and the process's CPU time over
// it (all goroutines, GC included): on a shared machine CPU time says more
// about the solver and less about the neighbours.
func timed(f func()) (wall, cpu time.Duration) {
	c0, w0 := cpuTime(), time.Now()
	f()
	return time.Since(w0), cpuTime() - c0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// joistSolve is one provisioning solve as the benchmarks run it: the
// fixture's types in one on-demand NodePool with large limits.
func joistSolve(its []*scheduling.InstanceType, pods []*corev1.Pod) (result, error) {
	in := scheduling.Input{NodePools: []*scheduling.NodePool{benchfixture.NodePool(its)}, Pods: pods}
	var plan *scheduling.Plan
	var err error
	wall, cpu := timed(func() { plan, err = scheduling.Solve(in) })
	if err != nil {
		return result{}, err
	}
	r := result{wall: wall, cpu: cpu, nodes: len(plan.NewClaims), cost: plan.Cost(), failed: len(plan.Errors)}
	if len(plan.Errors) > 0 {
		r.sample = fmt.Sprintf("%s: %v", plan.Errors[0].Pod.Name, plan.Errors[0].Err)
	}
	return r, nil
}
