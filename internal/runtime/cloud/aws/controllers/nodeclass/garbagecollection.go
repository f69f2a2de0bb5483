package nodeclass

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/periodic"
)

// Garbage collection cadence: launch templates unused for a minute and
// instance profiles of replaced roles are looked for every CollectInterval;
// a profile is deleted once nothing has used it for ProfileGrace.
const (
	CollectInterval = 30 * time.Second
	// ProfileGrace covers what the checks cannot see: a NodeClaim or
	// instance that the informer or DescribeInstances does not show yet.
	// Karpenter keeps a replaced profile at least an hour; every check
	// here is against live state, so a shorter wait suffices.
	ProfileGrace = 2 * time.Minute
)

// GarbageCollector deletes what the runtime made for node classes once
// nothing uses it: launch templates (see launchtemplate.Provider.Collect)
// and the instance profiles of roles a node class no longer names. It is a
// leader-elected runnable.
type GarbageCollector struct {
	kube     client.Client
	provider *awsprovider.Provider
	clock    clock.Clock
	// lastUsed is when each managed profile was last seen in use (or first
	// seen at all).
	lastUsed map[string]time.Time
}

// NewGarbageCollector wires the collector.
func NewGarbageCollector(kube client.Client, provider *awsprovider.Provider, clk clock.Clock) *GarbageCollector {
	return &GarbageCollector{kube: kube, provider: provider, clock: clk, lastUsed: map[string]time.Time{}}
}

// NeedLeaderElection keeps deletions on the leader.
func (g *GarbageCollector) NeedLeaderElection() bool { return true }

// Start collects every CollectInterval until ctx ends.
func (g *GarbageCollector) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("nodeclass.garbagecollection")
	return periodic.Run(log.IntoContext(ctx, logger), g.clock, CollectInterval, logger, "node class garbage collection", g.Collect)
}

// Collect runs one pass.
func (g *GarbageCollector) Collect(ctx context.Context) error {
	var errs []error
	if n, err := g.provider.LaunchTemplates().Collect(ctx); err != nil {
		errs = append(errs, err)
	} else if n > 0 {
		log.FromContext(ctx).Info("deleted unused launch templates", "count", n)
	}
	// IAM has no VPC endpoint: an isolated VPC's profiles stay.
	if !g.provider.IsolatedVPC() {
		if err := g.collectProfiles(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// collectProfiles deletes the managed profiles no node class resolves to,
// no NodeClaim and no instance uses, and no launch of their node class
// could be using, once that has held for ProfileGrace.
func (g *GarbageCollector) collectProfiles(ctx context.Context) error {
	profiles := g.provider.InstanceProfiles()
	managed, err := profiles.Managed(ctx, nil)
	if err != nil {
		return err
	}
	now := g.clock.Now()
	used, launching, err := g.profilesInUse(ctx)
	if err != nil {
		return err
	}
	var unused []string
	seen := map[string]bool{}
	for _, ip := range managed {
		name := aws.ToString(ip.InstanceProfileName)
		seen[name] = true
		// The path ends in the node class UID; a launch in flight for the
		// node class may be using any of its profiles.
		uid := strings.TrimSuffix(strings.TrimPrefix(aws.ToString(ip.Path), profiles.ClusterPath()), "/")
		if used[name] || launching[uid] {
			g.lastUsed[name] = now
			continue
		}
		if _, ok := g.lastUsed[name]; !ok {
			g.lastUsed[name] = now
			continue
		}
		if now.Sub(g.lastUsed[name]) >= ProfileGrace {
			unused = append(unused, name)
		}
	}
	for name := range g.lastUsed {
		if !seen[name] {
			delete(g.lastUsed, name)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	// Instances are listed last: one launched before this point is either
	// listed or its claim was seen above.
	running, err := g.provider.InstanceProfilesInUse(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range unused {
		if running[name] {
			g.lastUsed[name] = now
			continue
		}
		if err := profiles.Delete(ctx, name); err != nil {
			if errors.Is(err, instanceprofile.ErrNotOwned) {
				log.FromContext(ctx).Info("leaving an instance profile this cluster does not own", "instance-profile", name, "reason", err.Error())
				g.lastUsed[name] = now
				continue
			}
			errs = append(errs, err)
			continue
		}
		delete(g.lastUsed, name)
		log.FromContext(ctx).Info("deleted an instance profile no node class, NodeClaim or instance uses", "instance-profile", name)
	}
	return errors.Join(errs...)
}

// profilesInUse names the profiles node classes resolve to and NodeClaims
// launched with, and the UIDs of node classes with a NodeClaim whose
// launch has not returned.
func (g *GarbageCollector) profilesInUse(ctx context.Context) (used map[string]bool, launching map[string]bool, err error) {
	used, launching = map[string]bool{}, map[string]bool{}
	classes := &awsv1.EC2NodeClassList{}
	if err := g.kube.List(ctx, classes); err != nil {
		return nil, nil, fmt.Errorf("listing EC2NodeClasses: %w", err)
	}
	uids := map[string]string{}
	for i := range classes.Items {
		nc := &classes.Items[i]
		uids[nc.Name] = string(nc.UID)
		if nc.Status.InstanceProfile != "" {
			used[nc.Status.InstanceProfile] = true
		}
		if nc.Spec.Role != "" {
			used[g.provider.InstanceProfiles().Name(nc)] = true
		}
	}
	claims := &v1.NodeClaimList{}
	if err := g.kube.List(ctx, claims); err != nil {
		return nil, nil, fmt.Errorf("listing NodeClaims: %w", err)
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if name := c.Annotations[v1.InstanceProfileNameAnnotationKey]; name != "" {
			used[name] = true
		}
		if c.Status.ProviderID == "" && c.Spec.NodeClassRef != nil {
			launching[uids[c.Spec.NodeClassRef.Name]] = true
		}
	}
	return used, launching, nil
}
