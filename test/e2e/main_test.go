package e2e

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// clusterName is the simulated EKS cluster's name and discovery tag.
const clusterName = "joist-e2e"

// w is the world every scenario shares.
var w *world

type world struct {
	sandbox    *sandbox.Sandbox
	sim        *awssim.Server
	kube       client.Client
	controller *controllerProcess
	binary     string
	logDir     string
}

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	w, err = start(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		if w != nil {
			w.stop()
		}
		return 1
	}
	code := m.Run()
	if code != 0 {
		fmt.Fprintf(os.Stderr, "e2e: controller log: %s\n", w.controller.logPath)
		w.keepLogs()
	}
	w.stop()
	return code
}

func start(ctx context.Context) (*world, error) {
	bin, err := sandbox.FindBinDir()
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(bin, "terraform-provider-joist")
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("%s not found: run `make build` first", binary)
	}
	logDir, err := os.MkdirTemp("", "joist-e2e-")
	if err != nil {
		return nil, err
	}
	out := &world{binary: binary, logDir: logDir}
	t0 := time.Now()
	var progress io.Writer = io.Discard
	if testing.Verbose() {
		progress = os.Stderr
	}
	if out.sandbox, err = sandbox.Start(ctx, sandbox.Options{BinDir: bin, Progress: progress}); err != nil {
		return out, err
	}
	if out.sim, err = awssim.Start(ctx, awssim.Options{ClusterName: clusterName, RESTConfig: out.sandbox.Config, BootDelay: 0}); err != nil {
		return out, fmt.Errorf("starting the local AWS: %w", err)
	}
	defs, err := crds.CRDs()
	if err != nil {
		return out, err
	}
	if _, err := envtest.InstallCRDs(out.sandbox.Config, envtest.CRDInstallOptions{CRDs: defs}); err != nil {
		return out, fmt.Errorf("installing CRDs: %w", err)
	}
	scheme, err := operator.Scheme()
	if err != nil {
		return out, err
	}
	if out.kube, err = client.New(out.sandbox.Config, client.Options{Scheme: scheme}); err != nil {
		return out, err
	}
	if err := createNodeRole(ctx, out.sim); err != nil {
		return out, err
	}
	if out.controller, err = startController(ctx, out); err != nil {
		return out, err
	}
	fmt.Fprintf(os.Stderr, "e2e: world up in %s (sandbox %s, AWS %s)\n", time.Since(t0).Round(time.Millisecond), out.sandbox.Dir, out.sim.URL())
	return out, nil
}

// nodeRole is the IAM role EC2NodeClasses name; the node class controller
// wraps it in an instance profile.
const nodeRole = "KarpenterNodeRole-" + clusterName

func createNodeRole(ctx context.Context, sim *awssim.Server) error {
	_, err := iam.NewFromConfig(sim.AWSConfig()).CreateRole(ctx, &iam.CreateRoleInput{
		RoleName: aws.String(nodeRole),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow",` +
			`"Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	if err != nil {
		return fmt.Errorf("creating the node role: %w", err)
	}
	return nil
}

func (w *world) stop() {
	if w.controller != nil {
		w.controller.stop()
	}
	if w.sim != nil {
		w.sim.Close()
	}
	if w.sandbox != nil {
		_ = w.sandbox.Stop()
	}
}

// keepLogs copies the component logs next to the controller's before the
// sandbox removes its directory.
func (w *world) keepLogs() {
	src := filepath.Join(w.sandbox.Dir, "logs")
	entries, err := os.ReadDir(src)
	if err != nil {
		return
	}
	for _, e := range entries {
		if b, err := os.ReadFile(filepath.Join(src, e.Name())); err == nil {
			_ = os.WriteFile(filepath.Join(w.logDir, e.Name()), b, 0o644)
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: component logs kept in %s\n", w.logDir)
}
