package operator

import (
	"reflect"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// recorder is a manager that keeps what is added to it instead of running it.
type recorder struct {
	manager.Manager
	added []manager.Runnable
}

func (r *recorder) Add(run manager.Runnable) error {
	r.added = append(r.added, run)
	return nil
}

// reconcilerName is the name of a controller-runtime controller, or "" when
// run is some other runnable.
func reconcilerName(run manager.Runnable) string {
	v := reflect.ValueOf(run)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return ""
	}
	t := v.Elem().Type()
	if t.PkgPath() != "sigs.k8s.io/controller-runtime/pkg/internal/controller" || !strings.HasPrefix(t.Name(), "Controller[") {
		return ""
	}
	return v.Elem().FieldByName("Name").String()
}

// Every controller the operator starts is one entry of Controllers: each
// entry that says it is a reconciler registers exactly one controller, under
// its name, and every other entry registers none, so no reconciler runs that
// the list does not name. Names are unique, and gates and settings decide
// what Register adds.
func TestControllersNameEveryReconciler(t *testing.T) {
	sim, err := testenv.Start(awssim.Options{ClusterName: "joist"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	kube := testenv.KubeFor(t)
	scheme, err := Scheme()
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := manager.New(kube.Config, manager.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := awsprovider.New(sim.Config, mgr.GetClient(), testenv.CloudSettings("joist"))
	if err != nil {
		t.Fatal(err)
	}
	o := &Operator{
		Settings: &Settings{ClusterName: "joist", InterruptionQueue: "joist"},
		Manager:  mgr, Cluster: state.NewCluster(mgr.GetCache(), clock.RealClock{}),
		Recorder: events.NewRecorder(mgr.GetEventRecorder(EventSource)), Clock: clock.RealClock{},
		AWS: sim.Config, Logger: logr.Discard(), overlays: nodeoverlay.NewStore(),
	}
	o.SetCloud(p)

	list := o.Controllers(p)
	seen := map[string]bool{}
	for _, c := range list {
		if seen[c.Name] {
			t.Errorf("two entries named %s", c.Name)
		}
		seen[c.Name] = true
		rec := &recorder{Manager: mgr}
		if err := c.add(rec); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var names []string
		for _, run := range rec.added {
			if n := reconcilerName(run); n != "" {
				names = append(names, n)
			}
		}
		switch {
		case c.Reconciler && (len(names) != 1 || names[0] != c.Name):
			t.Errorf("entry %s registers reconcilers %v, want exactly one named %s", c.Name, names, c.Name)
		case !c.Reconciler && len(names) > 0:
			t.Errorf("entry %s registers reconcilers %v the list does not name", c.Name, names)
		}
	}

	// Gates and settings: the queue consumer runs only with a queue, the
	// NodeOverlay controller only under its gate.
	byName := map[string]Controller{}
	for _, c := range list {
		byName[c.Name] = c
	}
	if !byName["interruption.queue"].runs(o.Settings) || byName[nodeoverlay.ControllerName].runs(o.Settings) {
		t.Errorf("with a queue and no gates: queue runs %v, nodeoverlay runs %v; want true, false",
			byName["interruption.queue"].runs(o.Settings), byName[nodeoverlay.ControllerName].runs(o.Settings))
	}
	o.Settings = &Settings{ClusterName: "joist", FeatureGates: FeatureGates{"NodeOverlay": true}}
	for _, c := range o.Controllers(p) {
		if runs := c.runs(o.Settings); (c.Name == "interruption.queue" && runs) || (c.Name == nodeoverlay.ControllerName && !runs) {
			t.Errorf("with the NodeOverlay gate and no queue: %s runs %v", c.Name, runs)
		}
	}
}
