package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// component is one upstream binary the sandbox runs as a child process, with
// its output in a log file of its own.
type component struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	log     *os.File
	exited  chan struct{}
	waitErr error
}

func startComponent(name, binary string, args []string, logDir string) (*component, error) {
	return startComponentLog(name, binary, args, nil, logDir, false)
}

// startComponentLog starts a component with exactly env as its environment
// (nil inherits this process's); with appendLog it continues an existing
// log instead of starting it afresh.
func startComponentLog(name, binary string, args, env []string, logDir string, appendLog bool) (*component, error) {
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("%s: creating log dir: %w", name, err)
	}
	logPath := filepath.Join(logDir, name+".log")
	mode := os.O_TRUNC
	if appendLog {
		mode = os.O_APPEND
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|mode, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: opening log file: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: starting %s: %w (log: %s)", name, binary, err, logPath)
	}
	c := &component{name: name, logPath: logPath, cmd: cmd, log: f, exited: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func (c *component) pid() int { return c.cmd.Process.Pid }

// waitReady polls probe until it succeeds, the component exits, or the
// timeout passes; failures name the component and point at its log.
func (c *component) waitReady(ctx context.Context, timeout time.Duration, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-c.exited:
			return fmt.Errorf("%s exited before becoming ready (%v); log %s:\n%s", c.name, c.waitErr, c.logPath, tail(c.logPath, 15))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %s (last check: %v); log %s:\n%s", c.name, timeout, last, c.logPath, tail(c.logPath, 15))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM to the component's process group and SIGKILL after grace.
func (c *component) stop(grace time.Duration) error {
	defer c.log.Close()
	select {
	case <-c.exited:
		return nil
	default:
	}
	_ = terminate(c.cmd.Process.Pid, true)
	select {
	case <-c.exited:
		return nil
	case <-time.After(grace):
	}
	_ = kill(c.cmd.Process.Pid, true)
	select {
	case <-c.exited:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", c.name, c.pid())
	}
}

// tail returns the last n lines of a log file, indented, for error messages.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "  (no log: " + err.Error() + ")"
	}
	defer f.Close()
	const max = 64 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		_, _ = f.Seek(st.Size()-max, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var out bytes.Buffer
	for _, l := range lines {
		out.WriteString("  | ")
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return out.String()
}

var errNotReady = errors.New("not ready")
