package operator

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/log"

	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/nodeoverlay"
)

// catalogRefresh is how often prices and instance types are re-read.
const catalogRefresh = 12 * time.Hour

// WithAWS builds the EC2 cloud provider and installs it, with NodeOverlays
// applied to its instance types when the NodeOverlay gate is on. Its
// controllers are in Controllers.
func (o *Operator) WithAWS() (*awsprovider.Provider, error) {
	s := o.Settings
	p, err := awsprovider.New(o.AWS, o.Manager.GetClient(), awsprovider.Settings{
		ClusterName:             s.ClusterName,
		ClusterEndpoint:         s.ClusterEndpoint,
		ClusterCABundle:         s.ClusterCABundle,
		KubeDNSIP:               s.KubeDNSIP,
		KubernetesVersionFunc:   kubernetesVersionFunc(s, o.AWS, o.Manager.GetConfig()),
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
		o.overlays = nodeoverlay.NewStore()
		p.SetOverlay(o.overlays)
	}
	return p, nil
}

// kubernetesVersionFunc is where the Kubernetes version (for AMI aliases)
// comes from, as in Karpenter: eks:DescribeCluster with EKS_CONTROL_PLANE,
// else the API server.
func kubernetesVersionFunc(s *Settings, cfg aws.Config, restCfg *rest.Config) func() (string, error) {
	if s.EKSControlPlane {
		return awsprovider.EKSKubernetesVersion(eks.NewFromConfig(cfg), s.ClusterName)
	}
	return awsprovider.DiscoverKubernetesVersion(restCfg)
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
