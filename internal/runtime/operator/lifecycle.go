package operator

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/interruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/disruption/static"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/termination"
)

// WithTermination registers the drain-aware finalizers of Nodes and
// NodeClaims (cordon, evict through the Eviction API, terminate, release).
func (o *Operator) WithTermination() error {
	if o.Cloud == nil {
		return fmt.Errorf("operator: SetCloud must be called before WithTermination")
	}
	return termination.Register(o.Manager, o.Cloud, o.Recorder, o.Clock)
}

// WithDisruption registers the disruption loop (node repair with the
// NodeRepair gate, emptiness, drift, consolidation, budgets), the
// controllers it reads (NodeClaim conditions, pod events, the NodePool
// hash, expiration) and the static NodePool controller.
func (o *Operator) WithDisruption() error {
	if o.Cloud == nil {
		return fmt.Errorf("operator: SetCloud must be called before WithDisruption")
	}
	s := o.Settings
	if err := disruption.Register(o.Manager, o.Cluster, o.Cloud, o.Recorder, o.Clock, disruption.Options{
		SpotToSpot:       s.FeatureGates.Enabled("SpotToSpotConsolidation"),
		NodeRepair:       s.FeatureGates.Enabled("NodeRepair"),
		PreferencePolicy: s.PreferencePolicy,
		MinValuesPolicy:  s.MinValuesPolicy,
	}); err != nil {
		return err
	}
	// Registered with the gate off too, to tell static pools' owners why
	// their pools stay empty.
	return static.NewController(o.Manager.GetClient(), o.Cluster, o.Cloud, o.Recorder, o.Clock, s.FeatureGates.Enabled("StaticCapacity"),
		scheduling.Options{PreferencePolicy: s.PreferencePolicy, MinValuesPolicy: s.MinValuesPolicy}).Register(o.Manager)
}

// WithInterruption polls EC2 instance status (always, as Karpenter) and
// consumes INTERRUPTION_QUEUE when it is set.
func (o *Operator) WithInterruption(p *awsprovider.Provider) error {
	opts := interruption.Options{
		Kube: o.Manager.GetClient(), Unavailable: p.UnavailableOfferings(), Recorder: o.Recorder, Logger: o.Logger.WithName("interruption"),
	}
	if err := interruption.NewStatusController(opts, ec2.NewFromConfig(o.AWS)).Register(o.Manager); err != nil {
		return err
	}
	if o.Settings.InterruptionQueue == "" {
		return nil
	}
	opts.SQS, opts.QueueName = sqs.NewFromConfig(o.AWS), o.Settings.InterruptionQueue
	return interruption.NewController(opts).Register(o.Manager)
}
