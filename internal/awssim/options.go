package awssim

import (
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	Addr              string // listen address; default 127.0.0.1:0 (a free port)
	Region            string // default us-west-2
	AccountID         string // default 123456789012
	ClusterName       string // default "joist"; the karpenter.sh/discovery tag value
	KubernetesVersion string // default 1.36; names the seeded EKS AMIs and their SSM parameters
	// IPFamily of the EKS cluster registered for RESTConfig: "ipv4" (the
	// default) or "ipv6", which DescribeCluster reports with an IPv6
	// service CIDR.
	IPFamily string

	// AccessKeyID and SecretAccessKey are the static credentials Env and
	// AWSConfig hand out. Signatures are not verified.
	AccessKeyID     string // default AKIAJOISTSANDBOX0001
	SecretAccessKey string // default joist-sandbox-secret

	// RESTConfig, when set, reaches the cluster the simulated instances join:
	// the EKS cluster is registered with its endpoint and CA, and the kubelet
	// stand-in registers a Node for every running instance that was told to join.
	RESTConfig *rest.Config
	BootDelay  time.Duration // running -> Node registered; default 0

	PendingDuration        time.Duration // pending -> running; default 1s
	ShuttingDownDuration   time.Duration // shutting-down -> terminated; default 1s
	SpotInterruptionNotice time.Duration // default 2m
	DefaultPoolCapacity    int           // instances per (type, zone, capacity type); default 1000

	FaultSeed uint64 // seeds fault rates, for reproducible runs
	Logger    logr.Logger
}

func (o Options) withDefaults() Options {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	// The world's identity defaults where EC2 defines it.
	d := ec2.Options{Region: o.Region, AccountID: o.AccountID, ClusterName: o.ClusterName, KubernetesVersion: o.KubernetesVersion}.WithDefaults()
	o.Region, o.AccountID, o.ClusterName, o.KubernetesVersion = d.Region, d.AccountID, d.ClusterName, d.KubernetesVersion
	if o.AccessKeyID == "" {
		o.AccessKeyID = "AKIAJOISTSANDBOX0001"
	}
	if o.SecretAccessKey == "" {
		o.SecretAccessKey = "joist-sandbox-secret"
	}
	return o
}
