package scale

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/pricing"
)

// row is one line of the results table.
type row struct {
	Scenario string
	// Kind names the scenario for the goals it is checked against:
	// baseline, scale-out, scale-in, drift, anti-affinity or spread.
	Kind  string
	Pods  int
	Nodes int
	// Wall is the time to the scenario's end state. In provisioning
	// scenarios Arrival is from the Deployments' creation to the last pod
	// created (kube-controller-manager's share) and Decision from there to
	// the last NodeClaim created (Joist's).
	Wall, Arrival, Decision time.Duration
	// SchedulerReached is from the last pod's creation until kube-scheduler
	// had bound or marked Unschedulable every pod once: Joist sees a pod
	// only after that, so this much of Decision is the sandbox's.
	SchedulerReached time.Duration
	// Passes are the controller's scheduling passes during the scenario:
	// count, the first one's duration and their sum.
	Passes               int
	FirstPass, PassTotal time.Duration
	PeakRSS, P95RSS      float64 // MiB
	CPU                  float64 // cores, averaged over the scenario
	Calls                map[string]int
	// FreshRatio is Cost over what the solver would pay to provision the
	// same pods from nothing, FreshNodes that plan's node count.
	Cost, LPRatio, FreshRatio float64
	FreshNodes                int
	// Changed counts the nodes the scenario launched, removed or replaced:
	// the denominator of its AWS calls per node.
	Changed int
	Note    string
	// LeakChecked says the no-leaked-capacity check ran after the
	// scenario; Leaks is what broke it (nothing, when it held).
	LeakChecked bool
	Leaks       []string
}

// sampler follows the controller process: RSS and CPU time every 250 ms.
type sampler struct {
	w    *world
	stop chan struct{}
	done chan struct{}

	mu       sync.Mutex
	rss      []float64
	cpuTicks map[int]int64 // per PID: last utime+stime seen
	firstCPU map[int]int64
	start    time.Time
	end      time.Time
}

func startSampler(w *world) *sampler {
	s := &sampler{w: w, stop: make(chan struct{}), done: make(chan struct{}), cpuTicks: map[int]int64{}, firstCPU: map[int]int64{}, start: time.Now()}
	go func() {
		defer close(s.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	pid := s.w.controllerPID()
	if pid == 0 {
		return
	}
	rss, ticks, ok := procStats(pid)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rss = append(s.rss, rss)
	if _, seen := s.firstCPU[pid]; !seen {
		s.firstCPU[pid] = ticks
	}
	s.cpuTicks[pid] = ticks
}

// finish stops sampling and returns peak and P95 RSS (MiB) and average cores.
func (s *sampler) finish() (peak, p95, cores float64) {
	close(s.stop)
	<-s.done
	s.end = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.rss) > 0 {
		sorted := append([]float64(nil), s.rss...)
		sort.Float64s(sorted)
		peak = sorted[len(sorted)-1]
		p95 = sorted[int(float64(len(sorted)-1)*0.95)]
	}
	var ticks int64
	for pid, last := range s.cpuTicks {
		ticks += last - s.firstCPU[pid]
	}
	// Linux reports CPU time in clock ticks of 1/100 s.
	cores = float64(ticks) / 100 / s.end.Sub(s.start).Seconds()
	return peak, p95, cores
}

// procStats reads a process's resident set (MiB) and user+system CPU ticks.
func procStats(pid int) (rssMiB float64, ticks int64, ok bool) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			kb, _ := strconv.ParseFloat(f[1], 64)
			rssMiB = kb / 1024
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	rest := strings.Fields(string(stat)[strings.LastIndex(string(stat), ")")+2:])
	// After the command: state is field 3; utime and stime are fields 14 and 15.
	utime, _ := strconv.ParseInt(rest[11], 10, 64)
	stime, _ := strconv.ParseInt(rest[12], 10, 64)
	return rssMiB, utime + stime, true
}

// awsCalls counts the requests awssim served since the last reset, by operation.
func (w *world) awsCalls() map[string]int {
	out := map[string]int{}
	for _, r := range w.sb.AWS.Requests().Requests("", "") {
		if w.callsBy == "" || r.AccessKeyID == w.callsBy {
			out[r.Operation]++
		}
	}
	return out
}

func formatCalls(calls map[string]int) string { return formatCounts(calls, 6, " ") }

var prices = catalog.MustLoad()

// poolCost is the $/h of the pool's nodes, at the catalog's price for each
// node's type, zone and capacity type, plus the EBS volumes of its
// EC2NodeClass at the catalog's EBS prices: the bill, as the controller
// prices offerings (so the ratios to its plans compare like with like), on
// both sides of the comparison with upstream Karpenter.
func (w *world) poolCost(ctx context.Context, pool string) (float64, int, error) {
	var nodes corev1.NodeList
	if err := w.kube.List(ctx, &nodes, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		return 0, 0, err
	}
	region := w.sb.AWS.Options().Region
	ebs := pricing.New(nil, nil, region) // the catalog's EBS prices
	volumes := map[string]float64{}      // by node class
	var sum float64
	for _, n := range nodes.Items {
		it, zone := n.Labels[corev1.LabelInstanceTypeStable], n.Labels[corev1.LabelTopologyZone]
		var p float64
		var ok bool
		if n.Labels[v1.CapacityTypeLabelKey] == v1.CapacityTypeSpot {
			p, ok = prices.SpotPrice(region, zone, it)
		} else {
			p, ok = prices.OnDemandPrice(region, it)
		}
		if !ok {
			return 0, 0, fmt.Errorf("no catalog price for node %s (%s in %s)", n.Name, it, zone)
		}
		class := n.Labels[v1.LabelNodeClass]
		if _, ok := volumes[class]; !ok {
			var nc awsv1.EC2NodeClass
			if err := w.kube.Get(ctx, client.ObjectKey{Name: class}, &nc); err != nil {
				return 0, 0, fmt.Errorf("EC2NodeClass %q of node %s, for its volumes' cost: %w", class, n.Name, err)
			}
			volumes[class] = instancetype.VolumeCost(&nc, ebs)
		}
		sum += p + volumes[class]
	}
	return sum, len(nodes.Items), nil
}

// passes sums the controller's own scheduling passes logged in [from, to]:
// how many, the first one's duration, and their total. Together with the
// wall time they separate Joist's share from waiting on batch windows,
// launches and kube-scheduler.
func (w *world) passes(from, to time.Time) (n int, first, total time.Duration, err error) {
	c := w.sb.Controllers()
	if len(c) == 0 {
		return 0, 0, 0, fmt.Errorf("no controller process")
	}
	f, err := os.Open(c[0].Log)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"scheduling pass"`)) {
			continue
		}
		var e struct {
			Time     time.Time `json:"time"`
			Duration string    `json:"duration"`
		}
		if json.Unmarshal(line, &e) != nil || e.Time.Before(from) || e.Time.After(to) {
			continue
		}
		d, perr := time.ParseDuration(e.Duration)
		if perr != nil {
			continue
		}
		if n == 0 {
			first = d
		}
		n++
		total += d
	}
	return n, first, total, sc.Err()
}

// saveHeapProfile writes the controller's heap profile to JOIST_SCALE_DIR
// (heap-<name>.pb.gz; `go tool pprof` reads it), so a memory row can be
// explained afterwards. Without JOIST_SCALE_DIR it does nothing.
func (w *world) saveHeapProfile(ctx context.Context, name string) error {
	dir := os.Getenv("JOIST_SCALE_DIR")
	c := w.sb.Controllers()
	if dir == "" || len(c) == 0 {
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c[0].MetricsAddr+"/debug/pprof/heap", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "heap-"+name+".pb.gz"), b, 0o644)
}
