package operator

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"

	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/capacityblock"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay"
)

// catalogRefresh is how often prices and instance types are re-read.
const catalogRefresh = 12 * time.Hour

// WithAWS builds the EC2 cloud provider, installs it (with NodeOverlays
// applied to its instance types and their controller when the NodeOverlay
// gate is on), and registers the EC2NodeClass status controller, its
// garbage collector (launch templates, instance profiles), the capacity
// block expiration controller and the price/catalog refresher.
func (o *Operator) WithAWS() (*awsprovider.Provider, error) {
	s := o.Settings
	p, err := awsprovider.New(o.AWS, o.Manager.GetClient(), awsprovider.Settings{
		ClusterName:             s.ClusterName,
		ClusterEndpoint:         s.ClusterEndpoint,
		ClusterCABundle:         s.ClusterCABundle,
		KubeDNSIP:               s.KubeDNSIP,
		KubernetesVersionFunc:   awsprovider.DiscoverKubernetesVersion(o.Manager.GetConfig()),
		VMMemoryOverheadPercent: s.VMMemoryOverheadPercent,
		ReservedENIs:            s.ReservedENIs,
		DisableReservedCapacity: !s.FeatureGates.Enabled("ReservedCapacity"),
		IsolatedVPC:             s.IsolatedVPC,
		DisableDryRun:           s.DisableDryRun,
		AMIRefresh:              s.AMIRefreshInterval,
		SubnetRefresh:           s.SubnetRefreshInterval,
		SecurityGroupRefresh:    s.SecurityGroupRefreshInterval,
	})
	if err != nil {
		return nil, err
	}
	o.SetCloud(p)
	if s.FeatureGates.Enabled("NodeOverlay") {
		store := nodeoverlay.NewStore()
		p.SetOverlay(store)
		if err := nodeoverlay.NewController(o.Manager.GetClient(), p, p.NodeClasses(), store).Register(o.Manager); err != nil {
			return nil, err
		}
	}
	if err := nodeclass.NewController(o.Manager.GetClient(), p, o.Recorder, o.Clock).Register(o.Manager); err != nil {
		return nil, err
	}
	if err := o.Manager.Add(nodeclass.NewGarbageCollector(o.Manager.GetClient(), p, o.Clock)); err != nil {
		return nil, err
	}
	if s.FeatureGates.Enabled("ReservedCapacity") {
		if err := o.Manager.Add(capacityblock.NewExpiration(o.Manager.GetClient(), p.CapacityReservations(), o.Recorder, o.Clock)); err != nil {
			return nil, err
		}
	}
	if err := o.Manager.Add(&refresher{p: p}); err != nil {
		return nil, err
	}
	return p, nil
}

// refresher warms prices and the catalog at start, then every 12 hours.
// It runs on every replica so a new leader has warm caches.
type refresher struct{ p *awsprovider.Provider }

func (r *refresher) NeedLeaderElection() bool { return false }

func (r *refresher) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("catalog")
	for {
		if err := r.p.Start(ctx); err != nil && ctx.Err() == nil {
			logger.Error(err, "refreshing prices and instance types; keeping the previous ones")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(catalogRefresh):
		}
	}
}
