package operator

import (
	"context"
	"fmt"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/garbagecollection"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/lifecycle"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/counter"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodepool/readiness"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/provisioning"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state/nodepoolhealth"
)

// WithProvisioning registers the provisioning half of the runtime: pod and
// node triggers, the provisioner, the NodeClaim lifecycle and garbage
// collection, and the NodePool counter and readiness. Deleted NodeClaims
// need the finalizer controllers besides (WithTermination). Call SetCloud
// first.
func (o *Operator) WithProvisioning() error {
	if o.Cloud == nil {
		return fmt.Errorf("operator: SetCloud must be called before WithProvisioning")
	}
	mgr, kube, s := o.Manager, o.Manager.GetClient(), o.Settings
	health := nodepoolhealth.New()
	batcher := provisioning.NewBatcher(o.Clock, s.BatchIdleDuration, s.BatchMaxDuration)
	steps := []func() error{
		func() error { return provisioning.NewPodTrigger(kube, batcher, o.Cluster).Register(mgr) },
		func() error { return provisioning.NewNodeTrigger(kube, batcher).Register(mgr) },
		func() error {
			return mgr.Add(provisioning.NewProvisioner(kube, o.Cluster, o.Cloud, batcher, o.Recorder, o.Clock, provisioning.Options{
				NominationTTL: s.NominationTTL(), PreferencePolicy: s.PreferencePolicy, MinValuesPolicy: s.MinValuesPolicy,
			}))
		},
		func() error { return lifecycle.NewController(kube, o.Cloud, o.Recorder, o.Clock, health).Register(mgr) },
		func() error { return mgr.Add(garbagecollection.NewController(kube, o.Cloud, o.Recorder, o.Clock)) },
		func() error { return counter.NewController(kube).Register(mgr) },
		func() error { return mgr.Add(&ClusterState{Reader: kube}) },
		func() error { return mgr.Add(&Workload{Reader: kube}) },
		func() error { return watchPodStartup(context.Background(), mgr.GetCache()) },
		func() error { return readiness.NewController(kube, o.Cloud, health).Register(mgr) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}
