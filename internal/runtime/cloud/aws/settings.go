package aws

import (
	"errors"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

// Settings are the provider-wide settings (CLUSTER_NAME, CLUSTER_ENDPOINT,
// VM_MEMORY_OVERHEAD_PERCENT, RESERVED_ENIS, ISOLATED_VPC, ...).
type Settings struct {
	ClusterName     string
	ClusterEndpoint string
	// ClusterCABundle is the base64 PEM written into node user data.
	ClusterCABundle string
	// ClusterCIDR is the service CIDR AL2023 nodes need; when empty it is
	// resolved with eks:DescribeCluster (see ResolveClusterCIDR).
	ClusterCIDR string
	// KubeDNSIP is the cluster IP of kube-system/kube-dns, discovered at
	// start: the kubelet's clusterDNS when a node class sets none, and the
	// cluster's IP family. Empty when there is no such service.
	KubeDNSIP string
	// KubernetesVersion is the control plane's minor version ("1.36"), used
	// for AMI aliases; when empty KubernetesVersionFunc is asked.
	KubernetesVersion     string
	KubernetesVersionFunc func() (string, error)
	// VMMemoryOverheadPercent defaults to 0.075.
	VMMemoryOverheadPercent float64
	ReservedENIs            int
	// IsolatedVPC skips the Pricing API (the embedded table is used) and
	// the IAM calls of instance-profile cleanup.
	IsolatedVPC bool
	// DisableReservedCapacity (feature gate ReservedCapacity=false) leaves
	// capacity reservations unresolved and offers no reserved capacity.
	DisableReservedCapacity bool
	// DisableDryRun skips the node class permission dry-runs.
	DisableDryRun bool
	// Refresh intervals; zero takes the defaults (1m subnets and AMIs, 1m
	// security groups and capacity reservations, instancetype.DefaultRefresh
	// for instance types).
	SubnetRefresh              time.Duration
	AMIRefresh                 time.Duration
	SecurityGroupRefresh       time.Duration
	InstanceTypeRefresh        time.Duration
	CapacityReservationRefresh time.Duration
}

func (s Settings) withDefaults() Settings {
	if s.VMMemoryOverheadPercent == 0 {
		s.VMMemoryOverheadPercent = capacity.DefaultVMMemoryOverheadPercent
	}
	if s.SubnetRefresh == 0 {
		s.SubnetRefresh = time.Minute
	}
	if s.AMIRefresh == 0 {
		s.AMIRefresh = time.Minute
	}
	if s.SecurityGroupRefresh == 0 {
		s.SecurityGroupRefresh = time.Minute
	}
	if s.InstanceTypeRefresh == 0 {
		s.InstanceTypeRefresh = instancetype.DefaultRefresh
	}
	if s.CapacityReservationRefresh == 0 {
		s.CapacityReservationRefresh = time.Minute
	}
	return s
}

func (s Settings) validate() error {
	var errs []error
	if s.ClusterName == "" {
		errs = append(errs, errors.New("cluster name is required (CLUSTER_NAME)"))
	}
	if s.ClusterEndpoint == "" {
		errs = append(errs, errors.New("cluster endpoint is required (CLUSTER_ENDPOINT)"))
	}
	if s.KubernetesVersion == "" && s.KubernetesVersionFunc == nil {
		errs = append(errs, errors.New("set the Kubernetes version or a function that discovers it (see DiscoverKubernetesVersion)"))
	}
	if s.VMMemoryOverheadPercent < 0 || s.VMMemoryOverheadPercent >= 1 {
		errs = append(errs, errors.New("VM memory overhead percent must be in [0, 1) (VM_MEMORY_OVERHEAD_PERCENT)"))
	}
	if s.ReservedENIs < 0 {
		errs = append(errs, errors.New("reserved ENIs must not be negative (RESERVED_ENIS)"))
	}
	return errors.Join(errs...)
}
