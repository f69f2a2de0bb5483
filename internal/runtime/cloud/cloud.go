// Package cloud is the seam between the controllers and the cloud: the
// Provider interface the runtime's controllers call, and the errors that
// steer their behaviour. Its one implementation is cloud/aws.
package cloud

import (
	"context"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/scheduling"
)

// Provider launches, finds and terminates the machines behind NodeClaims.
type Provider interface {
	// Create launches one instance satisfying the claim's requirements and
	// resource requests, and returns the claim hydrated with what was
	// launched: providerID, imageID, capacity, allocatable and the resolved
	// labels (instance type, zone, capacity type, ...). Errors are an
	// *InsufficientCapacityError (the claim is deleted and the next pass
	// picks other offerings), a *NodeClassNotReadyError (the node class is
	// not usable: the claim is deleted), or a *CreateError (retried with the
	// claim kept, e.g. while the node class is still resolving).
	Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error)
	// Delete starts terminating the claim's instance; it returns a
	// *NodeClaimNotFoundError once the instance is gone.
	Delete(ctx context.Context, claim *v1.NodeClaim) error
	// Get returns the claim as reconstructed from the instance with this
	// providerID, or a *NodeClaimNotFoundError.
	Get(ctx context.Context, providerID string) (*v1.NodeClaim, error)
	// List returns every live instance the runtime launched in this cluster,
	// as claims; it drives garbage collection in both directions.
	List(ctx context.Context) ([]*v1.NodeClaim, error)
	// GetInstanceTypes returns every instance type the pool's node class can
	// launch, including currently unavailable offerings (Available=false),
	// with allocatable computed from the overhead model.
	GetInstanceTypes(ctx context.Context, pool *v1.NodePool) ([]*scheduling.InstanceType, error)
	// IsDrifted returns a non-empty reason when the claim's instance no longer
	// matches its node class (AMI, subnet, security groups, static hash).
	IsDrifted(ctx context.Context, claim *v1.NodeClaim) (DriftReason, error)
	// NodeClasses are the node class kinds the provider serves (one for
	// aws: EC2NodeClass), so the core controllers can watch and read node
	// classes without knowing their Go types.
	NodeClasses() []NodeClassKind
	// RepairPolicies are the node conditions under which node repair
	// replaces a node (used when the NodeRepair gate is on).
	RepairPolicies() []RepairPolicy
	// Name identifies the provider ("aws").
	Name() string
}
