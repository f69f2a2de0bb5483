package operator

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/capacityblock"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/tagging"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption"
	nodeclaimdisruption "github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/disruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/expiration"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/garbagecollection"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/lifecycle"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/podevents"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/counter"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/hash"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/readiness"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/static"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/provisioning"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/termination"
)

// Controller is one controller or runnable the operator starts.
type Controller struct {
	// Name is a reconciler's controller name, as its logs and the
	// controller_runtime_* series label it; for other runnables, what it is.
	Name string
	// Reconciler says it registers exactly one controller-runtime
	// controller, named Name; otherwise it registers none.
	Reconciler bool
	// Gate is the feature gate it runs under ("" for always).
	Gate string
	// Off says it does not run although its gate is on, and why.
	Off string
	add func(manager.Manager) error
}

// solverOptions are the settings every scheduling pass and simulation
// (provisioning, disruption, static pools) runs with.
func solverOptions(s *Settings) scheduling.Options {
	return scheduling.Options{PreferencePolicy: s.PreferencePolicy, MinValuesPolicy: s.MinValuesPolicy, NodeCost: &s.NodeCost}
}

// Controllers is every controller and runnable the operator starts, the
// one place that says what runs: the cloud provider's own, provisioning,
// the NodeClaim and NodePool controllers, termination, disruption and
// interruption. p is the provider WithAWS built.
func (o *Operator) Controllers(p *awsprovider.Provider) []Controller {
	s, rec, clk, cluster := o.Settings, o.Recorder, o.Clock, o.Cluster
	kube := o.Manager.GetClient()
	health := nodepoolhealth.New()
	batcher := provisioning.NewBatcher(clk, s.BatchIdleDuration, s.BatchMaxDuration)
	solver := solverOptions(s)
	evictions := termination.NewEvictionQueue(kube, rec)
	interruptions := interruption.Options{
		Kube: kube, Unavailable: p.UnavailableOfferings(), Recorder: rec, Logger: o.Logger.WithName("interruption"),
		SQS: sqs.NewFromConfig(o.AWS), QueueName: s.InterruptionQueue,
	}
	noQueue := ""
	if s.InterruptionQueue == "" {
		noQueue = "INTERRUPTION_QUEUE is not set"
	}
	type registrar interface{ Register(manager.Manager) error }
	reconciler := func(name, gate string, r func() registrar) Controller {
		return Controller{Name: name, Reconciler: true, Gate: gate, add: func(m manager.Manager) error { return r().Register(m) }}
	}
	runnable := func(name, gate string, r func() manager.Runnable) Controller {
		return Controller{Name: name, Gate: gate, add: func(m manager.Manager) error { return m.Add(r()) }}
	}
	return []Controller{
		// EC2NodeClasses and the AWS side
		reconciler("nodeclass.status", "", func() registrar { return nodeclass.NewController(kube, p, rec, clk) }),
		runnable("nodeclass.garbagecollection", "", func() manager.Runnable { return nodeclass.NewGarbageCollector(kube, p, clk) }),
		runnable("capacityblock.expiration", "ReservedCapacity", func() manager.Runnable {
			return capacityblock.NewExpiration(kube, p.CapacityReservations(), rec, clk)
		}),
		runnable("catalog.refresh", "", func() manager.Runnable { return &refresher{p: p} }),
		reconciler(nodeoverlay.ControllerName, "NodeOverlay", func() registrar {
			return nodeoverlay.NewController(kube, p, p.NodeClasses(), o.overlays)
		}),

		// provisioning
		reconciler("provisioner.trigger.pod", "", func() registrar { return provisioning.NewPodTrigger(kube, batcher, cluster) }),
		reconciler("provisioner.trigger.node", "", func() registrar { return provisioning.NewNodeTrigger(kube, batcher) }),
		runnable("provisioner", "", func() manager.Runnable {
			return provisioning.NewProvisioner(kube, cluster, o.Cloud, batcher, rec, clk, provisioning.Options{
				NominationTTL: s.NominationTTL(), Solver: solver,
			})
		}),
		// Registered with the gate off too, to tell static pools' owners
		// why their pools stay empty.
		reconciler(static.Name, "", func() registrar {
			return static.NewController(kube, cluster, o.Cloud, rec, clk, s.FeatureGates.Enabled("StaticCapacity"), solver)
		}),

		// NodeClaims
		reconciler("nodeclaim.lifecycle", "", func() registrar { return lifecycle.NewController(kube, o.Cloud, rec, clk, health) }),
		runnable("nodeclaim.garbagecollection", "", func() manager.Runnable { return garbagecollection.NewController(kube, o.Cloud, rec, clk) }),
		reconciler("nodeclaim.disruption", "", func() registrar { return nodeclaimdisruption.NewController(kube, o.Cloud, clk) }),
		reconciler("nodeclaim.podevents", "", func() registrar { return podevents.NewPodEvents(kube, clk) }),
		reconciler("nodeclaim.expiration", "", func() registrar { return expiration.NewExpirationController(kube, rec, clk) }),
		reconciler(tagging.Name, "", func() registrar { return tagging.NewController(kube, p, rec) }),

		// NodePools
		reconciler("nodepool.counter", "", func() registrar { return counter.NewController(kube) }),
		reconciler("nodepool.readiness", "", func() registrar { return readiness.NewController(kube, o.Cloud, health) }),
		reconciler("nodepool.hash", "", func() registrar { return hash.NewController(kube, o.Cloud) }),

		// termination: drain-aware finalizers of Nodes and NodeClaims
		runnable("eviction.queue", "", func() manager.Runnable { return evictions }),
		reconciler("node.termination", "", func() registrar { return termination.NewNodeController(kube, o.Cloud, rec, clk, evictions) }),
		reconciler("nodeclaim.termination", "", func() registrar { return termination.NewNodeClaimController(kube, o.Cloud, rec, clk) }),

		// disruption: node repair (its gate is read inside), emptiness,
		// drift, consolidation, budgets
		{Name: "disruption", add: func(m manager.Manager) error {
			return disruption.NewController(kube, cluster, o.Cloud, rec, clk, disruption.Options{
				SpotToSpot: s.FeatureGates.Enabled("SpotToSpotConsolidation"), NodeRepair: s.FeatureGates.Enabled("NodeRepair"),
				Solver:    solver,
				APIReader: m.GetAPIReader(), SettingsNamespace: ownNamespace(s.LeaderElectionNamespace, os.ReadFile),
			}).Register(m)
		}},

		// interruption: EC2 instance status always, as Karpenter; the queue
		// when there is one
		runnable("interruption.instancestatus", "", func() manager.Runnable {
			return interruption.NewStatusController(interruptions, ec2.NewFromConfig(o.AWS))
		}),
		{Name: "interruption.queue", Off: noQueue, add: func(m manager.Manager) error { return interruption.NewController(interruptions).Register(m) }},

		// metrics of the cluster as a whole, and pod startup times
		runnable("metrics.cluster", "", func() manager.Runnable { return &ClusterState{Reader: kube} }),
		runnable("metrics.workload", "", func() manager.Runnable { return &Workload{Reader: kube} }),
		{Name: "metrics.podstartup", add: func(m manager.Manager) error { return watchPodStartup(context.Background(), m.GetCache()) }},
	}
}

// Register adds to the manager every controller of Controllers whose gate
// is on. Call WithAWS first.
func (o *Operator) Register(p *awsprovider.Provider) error {
	for _, c := range o.Controllers(p) {
		if !c.runs(o.Settings) {
			continue
		}
		if err := c.add(o.Manager); err != nil {
			return fmt.Errorf("registering %s: %w", c.Name, err)
		}
	}
	return nil
}

// runs says whether the controller starts under s.
func (c Controller) runs(s *Settings) bool {
	return c.Off == "" && (c.Gate == "" || s.FeatureGates.Enabled(c.Gate))
}
