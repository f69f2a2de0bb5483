package ec2

import (
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
)

// Options shape the simulated EC2. Zero values take the defaults noted.
type Options struct {
	Region            string // default catalog.DefaultRegion
	AccountID         string // default 123456789012
	ClusterName       string // the karpenter.sh/discovery tag value on subnets and security groups; default "joist"
	KubernetesVersion string // version in the seeded EKS image names; default 1.36

	PendingDuration        time.Duration // pending -> running; default 1s
	ShuttingDownDuration   time.Duration // shutting-down -> terminated; default 1s
	TerminatedRetention    time.Duration // how long terminated instances stay visible; default 1h
	SpotInterruptionNotice time.Duration // warning -> reclaim; default 2m
	DefaultPoolCapacity    int           // instances per (type, zone, capacity type) pool; default 1000

	// Events receives every lifecycle event; nil drops them.
	Events EventSink

	// InstanceProfiles looks up an IAM instance profile by name or ARN. When
	// set, launches naming an unknown profile fail as in EC2 and instances
	// carry the profile's real ARN and ID; when nil, any profile is accepted.
	InstanceProfiles func(nameOrARN string) (arn, id string, ok bool)
}

// WithDefaults returns o with every zero value replaced by its default.
func (o Options) WithDefaults() Options {
	if o.Region == "" {
		o.Region = catalog.DefaultRegion
	}
	if o.AccountID == "" {
		o.AccountID = "123456789012"
	}
	if o.ClusterName == "" {
		o.ClusterName = "joist"
	}
	if o.KubernetesVersion == "" {
		o.KubernetesVersion = "1.36"
	}
	if o.PendingDuration == 0 {
		o.PendingDuration = time.Second
	}
	if o.ShuttingDownDuration == 0 {
		o.ShuttingDownDuration = time.Second
	}
	if o.TerminatedRetention == 0 {
		o.TerminatedRetention = time.Hour
	}
	if o.SpotInterruptionNotice == 0 {
		o.SpotInterruptionNotice = 2 * time.Minute
	}
	if o.DefaultPoolCapacity == 0 {
		o.DefaultPoolCapacity = 1000
	}
	return o
}
