package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// controllerProcess is the controller binary running as a subprocess.
type controllerProcess struct {
	cmd         *exec.Cmd
	logPath     string
	healthPort  int
	metricsPort int
	done        chan error
}

// startController runs `terraform-provider-joist controller` against the
// sandbox and the local AWS and waits until /readyz answers.
func startController(ctx context.Context, w *world) (*controllerProcess, error) {
	health, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &controllerProcess{healthPort: health, metricsPort: metricsPort, done: make(chan error, 1)}
	p.logPath = filepath.Join(w.logDir, fmt.Sprintf("controller-%d.log", time.Now().UnixNano()))
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(w.binary, "controller")
	env := append(os.Environ(),
		"KUBECONFIG="+w.sandbox.Kubeconfig,
		"CLUSTER_NAME="+clusterName,
		"CLUSTER_ENDPOINT="+w.sandbox.Config.Host,
		fmt.Sprintf("HEALTH_PROBE_PORT=%d", health),
		fmt.Sprintf("METRICS_PORT=%d", metricsPort),
		"LEADER_ELECTION_NAMESPACE=kube-system",
	)
	for k, v := range w.sim.Env() {
		env = append(env, k+"="+v)
	}
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("starting %s controller: %w", w.binary, err)
	}
	go func() {
		p.done <- p.cmd.Wait()
		logFile.Close()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", health)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-p.done:
			return nil, fmt.Errorf("controller exited before becoming ready (%v); log: %s", err, p.logPath)
		case <-ctx.Done():
			p.kill()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			p.kill()
			return nil, fmt.Errorf("controller not ready after 2m; log: %s", p.logPath)
		}
	}
}

// kill ends the process at once (SIGKILL), as a crash would.
func (p *controllerProcess) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
	p.done <- nil
}

// stop asks the process to shut down (SIGTERM) and waits for it.
func (p *controllerProcess) stop() {
	select {
	case err := <-p.done:
		p.done <- err
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.done:
		p.done <- err
	case <-time.After(20 * time.Second):
		p.kill()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// metric reads one sample from the controller's /metrics, e.g.
// joist_nodeclaims_launched_total{nodepool="a"}; ok is false when absent.
func (p *controllerProcess) metric(series string) (value float64, ok bool, err error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metricsPort))
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
