package sandbox

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

const usage = `usage: terraform-provider-joist sandbox <up|down|status> [--dir DIR]

  up      start the local control plane in the background and print how to use it
  down    stop every process the sandbox started and remove its state
  status  say whether the sandbox runs, and where its kubeconfig is
`

// state files inside the sandbox directory
const (
	pidFile   = "sandbox.pid"
	readyFile = "ready"
	envFile   = "env"
	logFile   = "sandbox.log"
	// controllersFile lists the joist controller processes the sandbox runs.
	controllersFile = "controllers"
)

// Command runs the `sandbox` CLI mode with the arguments after "sandbox".
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("sandbox: missing subcommand")
	}
	fs := flag.NewFlagSet("sandbox "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".sandbox", "state directory (kubeconfig, logs)")
	cluster := fs.String("cluster-name", "joist-sandbox", "EKS cluster name awssim reports and tags its subnets and security groups for")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	switch args[0] {
	case "up":
		return up(ctx, abs, *cluster, stdout)
	case "down":
		return down(abs, stdout)
	case "status":
		return status(abs, stdout)
	case "serve":
		return serve(ctx, abs, *cluster, stdout)
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("sandbox: unknown subcommand %q", args[0])
	}
}

// runningPID returns the PID of the sandbox serving dir, or 0.
func runningPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	if !processAlive(pid) {
		return 0
	}
	return pid
}

func up(ctx context.Context, dir, cluster string, stdout io.Writer) error {
	if pid := runningPID(dir); pid != 0 {
		fmt.Fprintf(stdout, "sandbox: already running (pid %d)\n", pid)
		return printEnv(dir, stdout)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, logFile)
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(exe, "sandbox", "serve", "--dir", dir, "--cluster-name", cluster)
	cmd.Stdout, cmd.Stderr = log, log
	// Its own session: the sandbox outlives this command and its terminal.
	cmd.SysProcAttr = daemonAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: starting the background process: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Relay the background process's progress while waiting for it.
	follow, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer follow.Close()
	r := bufio.NewReader(follow)
	relay := func() {
		for {
			line, err := r.ReadString('\n')
			if line != "" && strings.HasSuffix(line, "\n") {
				fmt.Fprint(stdout, line)
			}
			if err != nil {
				return
			}
		}
	}
	for {
		relay()
		if _, err := os.Stat(filepath.Join(dir, readyFile)); err == nil {
			relay()
			return printEnv(dir, stdout)
		}
		select {
		case err := <-exited:
			relay()
			return fmt.Errorf("sandbox: the background process exited (%v) before the sandbox was ready; log %s", err, logPath)
		case <-ctx.Done():
			_ = terminate(cmd.Process.Pid, true)
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func printEnv(dir string, stdout io.Writer) error {
	b, err := os.ReadFile(filepath.Join(dir, envFile))
	if err != nil {
		return fmt.Errorf("sandbox: reading %s: %w", filepath.Join(dir, envFile), err)
	}
	fmt.Fprintf(stdout, "\nTo use the sandbox:\n\n%s\n  kubectl --kubeconfig %s get nodes,pods -A\n",
		indent(string(b)), filepath.Join(dir, "kubeconfig"))
	return nil
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// serve is the background process behind `up`: it owns the components and
// stops them on SIGTERM or SIGINT.
func serve(ctx context.Context, dir, cluster string, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(dir, pidFile))
	sb, err := Start(ctx, Options{
		Dir: dir, Progress: stdout, AWS: &awssim.Options{ClusterName: cluster},
		RunControllers: true, SystemNodes: 2,
	})
	if err != nil {
		fmt.Fprintln(stdout, "sandbox:", err)
		return err
	}
	var env strings.Builder
	vars := sb.Env()
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&env, "export %s=%s\n", k, vars[k])
	}
	if err := os.WriteFile(filepath.Join(dir, envFile), []byte(env.String()), 0o644); err != nil {
		_ = sb.Stop()
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, readyFile), nil, 0o644); err != nil {
		_ = sb.Stop()
		return err
	}
	// `status` runs in another process: publish what the runner runs.
	for done := false; !done; {
		var lines []string
		for _, c := range sb.Controllers() {
			lines = append(lines, c.String())
		}
		_ = os.WriteFile(filepath.Join(dir, controllersFile), []byte(strings.Join(lines, "\n")), 0o644)
		select {
		case <-ctx.Done():
			done = true
		case <-time.After(2 * time.Second):
		}
	}
	fmt.Fprintln(stdout, "sandbox: shutting down")
	os.Remove(filepath.Join(dir, readyFile))
	return sb.Stop()
}

func down(dir string, stdout io.Writer) error {
	pid := runningPID(dir)
	if pid == 0 {
		fmt.Fprintln(stdout, "sandbox: not running")
		return os.RemoveAll(dir)
	}
	fmt.Fprintf(stdout, "sandbox: stopping (pid %d)\n", pid)
	_ = terminate(pid, false)
	deadline := time.Now().Add(90 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			// The process group holds every component the sandbox started.
			_ = kill(pid, true)
			return fmt.Errorf("sandbox: pid %d did not stop within 90s; killed its process group; log %s", pid, filepath.Join(dir, logFile))
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Fprintln(stdout, "sandbox: stopped")
	return os.RemoveAll(dir)
}

func status(dir string, stdout io.Writer) error {
	pid := runningPID(dir)
	if pid == 0 {
		fmt.Fprintln(stdout, "sandbox: not running")
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, readyFile)); err != nil {
		fmt.Fprintf(stdout, "sandbox: starting (pid %d); log %s\n", pid, filepath.Join(dir, logFile))
		return nil
	}
	fmt.Fprintf(stdout, "sandbox: running (pid %d); logs in %s\n", pid, filepath.Join(dir, "logs"))
	if b, _ := os.ReadFile(filepath.Join(dir, controllersFile)); len(b) > 0 {
		fmt.Fprintf(stdout, "joist controller:\n%s", indent(string(b)))
	} else {
		fmt.Fprintln(stdout, "joist controller: none running (apply a joist_controller resource)")
	}
	return printEnv(dir, stdout)
}
