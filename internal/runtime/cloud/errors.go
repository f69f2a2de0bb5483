package cloud

import (
	"errors"
	"fmt"
)

// InsufficientCapacityError means no offering the claim allows could be
// launched now; the offerings tried are already marked unavailable.
type InsufficientCapacityError struct{ Err error }

func (e *InsufficientCapacityError) Error() string {
	return fmt.Sprintf("insufficient capacity: %v", e.Err)
}
func (e *InsufficientCapacityError) Unwrap() error { return e.Err }

// NodeClaimNotFoundError means the claim's instance does not exist (any more).
type NodeClaimNotFoundError struct{ Err error }

func (e *NodeClaimNotFoundError) Error() string { return fmt.Sprintf("nodeclaim not found: %v", e.Err) }
func (e *NodeClaimNotFoundError) Unwrap() error { return e.Err }

// UnmanagedInstanceError means the claim's instance carries the cluster's
// marks (a NodePool tag and a cluster tag) yet fails the ownership check,
// so it is not touched: for the cluster it does not exist, but it still
// runs and is billed. It comes wrapped in a NodeClaimNotFoundError, so the
// claim is released as for any instance that is not the cluster's; callers
// report it.
type UnmanagedInstanceError struct {
	InstanceID string
	Err        error
}

func (e *UnmanagedInstanceError) Error() string {
	return fmt.Sprintf("instance %s is tagged for this cluster but fails its ownership check: %v", e.InstanceID, e.Err)
}
func (e *UnmanagedInstanceError) Unwrap() error { return e.Err }

// AsUnmanagedInstance returns the UnmanagedInstanceError err is or wraps.
func AsUnmanagedInstance(err error) (*UnmanagedInstanceError, bool) {
	var e *UnmanagedInstanceError
	ok := errors.As(err, &e)
	return e, ok
}

// NodeClassNotReadyError means the claim's node class has not resolved its
// subnets, security groups, AMIs or instance profile yet.
type NodeClassNotReadyError struct{ Err error }

func (e *NodeClassNotReadyError) Error() string {
	return fmt.Sprintf("node class not ready: %v", e.Err)
}
func (e *NodeClassNotReadyError) Unwrap() error { return e.Err }

// CreateError is any other launch failure; Reason is surfaced on the claim's
// Launched condition.
type CreateError struct {
	Reason string
	Err    error
}

func (e *CreateError) Error() string { return fmt.Sprintf("%s: %v", e.Reason, e.Err) }
func (e *CreateError) Unwrap() error { return e.Err }

// IsInsufficientCapacity reports whether err is or wraps an InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var e *InsufficientCapacityError
	return errors.As(err, &e)
}

// IsNodeClaimNotFound reports whether err is or wraps a NodeClaimNotFoundError.
func IsNodeClaimNotFound(err error) bool {
	var e *NodeClaimNotFoundError
	return errors.As(err, &e)
}

// IsNodeClassNotReady reports whether err is or wraps a NodeClassNotReadyError.
func IsNodeClassNotReady(err error) bool {
	var e *NodeClassNotReadyError
	return errors.As(err, &e)
}
