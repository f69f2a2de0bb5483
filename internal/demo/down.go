package demo

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Down is `make demo-down`: the demo's workload goes, `terraform destroy`
// removes what the quickstart applied (the controller drains and
// terminates the nodes of the NodePools as they go), awssim is asked for
// any instance still alive, and the sandbox stops and its state is removed.
func Down(ctx context.Context, opts Options) error {
	if err := opts.defaults(); err != nil {
		return err
	}
	var errs []error
	if w, err := Connect(opts.Dir); err == nil && sandboxAlive(opts) {
		errs = append(errs, teardown(ctx, opts, w))
		if opts.BeforeStop != nil {
			errs = append(errs, opts.BeforeStop(w))
		}
	} else {
		fmt.Fprintln(opts.Out, "== the sandbox is not running; removing its state")
	}
	fmt.Fprintln(opts.Out, "== sandbox down")
	cmd := exec.CommandContext(ctx, opts.binary(), "sandbox", "down", "--dir", opts.Dir)
	errs = append(errs, relay(cmd, opts.Out, func(string) bool { return true }))
	return errors.Join(errs...)
}

// sandboxAlive asks the sandbox CLI whether the sandbox in opts.Dir runs.
func sandboxAlive(opts Options) bool {
	out, err := exec.Command(opts.binary(), "sandbox", "status", "--dir", opts.Dir).Output()
	return err == nil && strings.Contains(string(out), "sandbox: running")
}

func teardown(ctx context.Context, opts Options, w *World) error {
	fmt.Fprintf(opts.Out, "== removing the demo workload (namespace %s)\n", Namespace)
	if err := deleteNamespace(ctx, w); err != nil {
		return err
	}
	if fileExists(statePath(opts.Dir)) || fileExists(filepath.Join(opts.Dir, "terraform.tfstate")) {
		fmt.Fprintln(opts.Out, "== terraform destroy")
		tf, err := newTerraform(w, opts)
		if err != nil {
			return err
		}
		if err := tf.run(ctx, "destroy"); err != nil {
			return err
		}
	}
	left, err := liveInstances(ctx, w)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("awssim still has %d live instances after terraform destroy: %s", len(left), strings.Join(left, ", "))
	}
	fmt.Fprintln(opts.Out, "== awssim: no instance left (DescribeInstances lists none pending, running, stopping or stopped)")
	return nil
}

func deleteNamespace(ctx context.Context, w *World) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if err := w.Kube.Delete(ctx, ns, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := w.Kube.Get(ctx, client.ObjectKey{Name: Namespace}, ns)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s still exists after 2m (%v)", Namespace, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// liveInstances lists every instance in awssim that is not terminated,
// waiting a little for the ones shutting down.
func liveInstances(ctx context.Context, w *World) ([]string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		all, err := w.describeInstances(ctx)
		if err != nil {
			return nil, err
		}
		var live []string
		shutting := false
		for _, i := range all {
			switch i.State.Name {
			case ec2types.InstanceStateNameTerminated:
			case ec2types.InstanceStateNameShuttingDown:
				shutting = true
			default:
				live = append(live, fmt.Sprintf("%s (%s)", aws.ToString(i.InstanceId), i.State.Name))
			}
		}
		if !shutting || time.Now().After(deadline) {
			return live, nil
		}
		time.Sleep(time.Second)
	}
}
