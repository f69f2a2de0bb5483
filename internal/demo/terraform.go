package demo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// providerSource is the joist provider's registry address in the examples.
const providerSource = "joistdev/joist"

// terraform runs the terraform CLI on a copy of examples/quickstart in the
// sandbox directory, with the locally built provider. The copy is the
// working directory, so its state is the local backend's default
// terraform.tfstate there (no deprecated -state flag); the demo leaves
// nothing in the example and `make demo-down` removes it all.
type terraform struct {
	binDir, config, dir string
	env                 []string
	vars                []string
	out                 io.Writer
}

func newTerraform(w *World, opts Options) (*terraform, error) {
	binDir, vars, out := filepath.Join(opts.Root, "bin"), opts.variables(), opts.Out
	config, err := copyExample(filepath.Join(opts.Root, "examples", "quickstart"), filepath.Join(w.Dir, "quickstart"))
	if err != nil {
		return nil, err
	}
	// State from before the copy (the sandbox directory's top level) moves in.
	if old := filepath.Join(w.Dir, "terraform.tfstate"); fileExists(old) && !fileExists(filepath.Join(config, "terraform.tfstate")) {
		if err := os.Rename(old, filepath.Join(config, "terraform.tfstate")); err != nil {
			return nil, err
		}
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		return nil, fmt.Errorf("demo: the terraform CLI is not on PATH: install Terraform 1.8 or later")
	}
	rc := filepath.Join(w.Dir, "dev.tfrc")
	body := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", providerSource, binDir)
	if err := os.WriteFile(rc, []byte(body), 0o644); err != nil {
		return nil, err
	}
	tf := &terraform{
		binDir: binDir, config: config, dir: w.Dir, out: out,
		// No `terraform init`: with a development override the provider
		// needs no installation, and init would ask the registry.
		env: w.Environ("TF_CLI_CONFIG_FILE="+rc, "TF_DATA_DIR="+filepath.Join(w.Dir, "terraform"), "TF_IN_AUTOMATION=1", "TF_INPUT=0"),
	}
	for _, k := range sortedKeys(vars) {
		tf.vars = append(tf.vars, "-var", k+"="+vars[k])
	}
	return tf, nil
}

// StatePath is where the demo keeps the quickstart's state.
func (tf *terraform) StatePath() string { return filepath.Join(tf.config, "terraform.tfstate") }

// statePath is where a demo in the sandbox directory dir keeps its state.
func statePath(dir string) string { return filepath.Join(dir, "quickstart", "terraform.tfstate") }

// copyExample copies the example's Terraform files into dir (the demo's
// working copy), replacing older copies of them; state stays.
func copyExample(from, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	files, err := filepath.Glob(filepath.Join(from, "*.tf"))
	if err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("demo: no Terraform files in %s", from)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// planExitCode runs `terraform plan -detailed-exitcode`: 0 when nothing
// would change, 2 when something would; the plan's output comes back for
// the report.
func (tf *terraform) planExitCode(ctx context.Context) (int, string, error) {
	args := append([]string{"-chdir=" + tf.config, "plan", "-detailed-exitcode", "-input=false", "-no-color"}, tf.vars...)
	cmd := exec.CommandContext(ctx, "terraform", args...)
	cmd.Env = tf.env
	out, err := cmd.CombinedOutput()
	if logErr := os.WriteFile(filepath.Join(tf.dir, "logs", "terraform-plan.log"), out, 0o644); logErr != nil {
		return 0, "", logErr
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out), nil
	case errors.As(err, &exit) && exit.ExitCode() == 2:
		return 2, string(out), nil
	}
	return 0, string(out), fmt.Errorf("terraform plan failed (%v):\n%s", err, out)
}

// progressLine picks the lines of terraform's output worth showing live:
// each resource's start and end, and the closing summary.
var progressLine = regexp.MustCompile(`(Creating\.\.\.|Creation complete|Modifying\.\.\.|Modifications complete|Destroying\.\.\.|Destruction complete|Still \w+ing\.\.\.|Apply complete|Destroy complete|No changes|Error:)`)

// run runs `terraform <command> -auto-approve` with the demo's variables,
// showing the progress lines and keeping the whole output in a log.
func (tf *terraform) run(ctx context.Context, command string) error {
	logPath := filepath.Join(tf.dir, "logs", "terraform-"+command+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return err
	}
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer log.Close()
	args := append([]string{"-chdir=" + tf.config, command, "-auto-approve", "-input=false", "-no-color"}, tf.vars...)
	cmd := exec.CommandContext(ctx, "terraform", args...)
	cmd.Env = tf.env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	var tail []string
	go func() {
		defer close(done)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(log, line)
			tail = append(tail, line)
			if len(tail) > 40 {
				tail = tail[1:]
			}
			if progressLine.MatchString(line) {
				fmt.Fprintf(tf.out, "  terraform: %s\n", strings.TrimSpace(line))
			}
		}
	}()
	err = cmd.Wait()
	pw.Close()
	<-done
	if err != nil {
		return fmt.Errorf("terraform %s failed (%v); full output in %s:\n%s", command, err, logPath, strings.Join(tail, "\n"))
	}
	return nil
}
