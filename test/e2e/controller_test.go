package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// controllerHandle reaches the controller processes the sandbox runs for
// the world's Deployment.
type controllerHandle struct {
	sb *sandbox.Sandbox
}

// leaderSeries is controller-runtime's gauge of whether a process holds
// the leader-election Lease.
const leaderSeries = `leader_election_master_status{name="karpenter-leader-election"}`

// leader is the process that holds the leader-election Lease.
func (c *controllerHandle) leader() (sandbox.ControllerProcess, error) {
	procs := c.sb.Controllers()
	for _, p := range procs {
		if v, ok, err := scrape(p.MetricsAddr, leaderSeries); err == nil && ok && v == 1 {
			return p, nil
		}
	}
	return sandbox.ControllerProcess{}, fmt.Errorf("no leader among %d controller processes", len(procs))
}

// waitLeader waits until a process other than the one with pid previous
// leads and answers /readyz, and returns it.
func (c *controllerHandle) waitLeader(ctx context.Context, previous int) (sandbox.ControllerProcess, error) {
	deadline := time.Now().Add(waitTimeout)
	for {
		p, err := c.leader()
		if err == nil && p.PID != previous && ready(p) {
			return p, nil
		}
		if time.Now().After(deadline) {
			return p, fmt.Errorf("no new leader within %s (%v): %v", waitTimeout, err, c.sb.Controllers())
		}
		select {
		case <-ctx.Done():
			return p, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func ready(p sandbox.ControllerProcess) bool {
	resp, err := http.Get("http://" + p.HealthAddr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// kill ends the leader at once (SIGKILL), as a crash would, and returns
// it; the sandbox restarts it as a kubelet restarts a container.
func (c *controllerHandle) kill() (sandbox.ControllerProcess, error) {
	p, err := c.leader()
	if err != nil {
		return p, err
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		return p, fmt.Errorf("killing controller pid %d: %w", p.PID, err)
	}
	return p, nil
}

// metric reads one sample from the leader's /metrics, e.g.
// joist_nodeclaims_launched_total{nodepool="a"}; ok is false when absent.
func (c *controllerHandle) metric(series string) (value float64, ok bool, err error) {
	p, err := c.leader()
	if err != nil {
		return 0, false, err
	}
	return scrape(p.MetricsAddr, series)
}

func scrape(addr, series string) (value float64, ok bool, err error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, found := strings.CutPrefix(sc.Text(), series+" "); found {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v, err == nil, err
		}
	}
	return 0, false, sc.Err()
}
