package sandbox

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/crds"
)

// DeployController installs the CRDs and the controller's objects the way
// the joist_controller resource does (controllerdeploy, server-side apply,
// the CRD bundle's hash as the rollout token), and waits until the
// Deployment is available and every process the sandbox runs for it (see
// controller.go; Options.RunControllers) answers /readyz. spec.Image must
// name the ControllerImage repository.
func (s *Sandbox) DeployController(ctx context.Context, spec controllerdeploy.Spec) error {
	if s.runner == nil {
		return fmt.Errorf("sandbox: started without RunControllers: nothing would run the controller")
	}
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	manifests, err := crds.Manifests()
	if err != nil {
		return err
	}
	defs, hash, err := controllerdeploy.CRDs(manifests)
	if err != nil {
		return err
	}
	if err := controllerdeploy.Apply(ctx, dyn, defs); err != nil {
		return fmt.Errorf("sandbox: installing the CRDs: %w", err)
	}
	if err := controllerdeploy.WaitEstablished(ctx, dyn, defs); err != nil {
		return err
	}
	spec.RolloutToken = hash
	objs, err := controllerdeploy.Objects(spec)
	if err != nil {
		return err
	}
	if err := controllerdeploy.Apply(ctx, dyn, objs); err != nil {
		return fmt.Errorf("sandbox: deploying the controller: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	ns := spec.Namespace
	if ns == "" {
		ns = "kube-system"
	}
	if err := controllerdeploy.WaitAvailable(wctx, dyn, ns); err != nil {
		return fmt.Errorf("sandbox: controller Deployment not available: %w", err)
	}
	// Available means kwok reports the pods Ready; wait for the processes.
	want := 1
	if s.runner.every && spec.Replicas > 1 {
		want = int(spec.Replicas)
	}
	for {
		ready := 0
		for _, p := range s.Controllers() {
			if healthz("http://"+p.HealthAddr+"/readyz")(wctx) == nil {
				ready++
			}
		}
		if ready >= want {
			return nil
		}
		select {
		case <-wctx.Done():
			return fmt.Errorf("sandbox: %d of %d controller processes ready: %w; logs in %s", ready, want, wctx.Err(), s.logDir())
		case <-time.After(250 * time.Millisecond):
		}
	}
}
