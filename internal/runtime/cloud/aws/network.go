package aws

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
)

// clusterNetwork is what nodes must know of the cluster's network: the
// service CIDR (AL2023's NodeConfig carries it) and the IP family. The CIDR
// comes from eks:DescribeCluster the first time a node class needs it, not
// at start, so clusters where the call is not allowed still run node
// classes that do not need it; once resolved it is kept.
type clusterNetwork struct {
	eks     *eks.Client
	cluster string

	mu   sync.Mutex
	cidr string
}

// ClusterCIDRError is a failure to learn the cluster's service CIDR.
type ClusterCIDRError struct{ Err error }

func (e *ClusterCIDRError) Error() string { return e.Err.Error() }
func (e *ClusterCIDRError) Unwrap() error { return e.Err }

// ResolveClusterCIDR returns the cluster's service CIDR: the setting when
// given, else the IPv4 or IPv6 service CIDR eks:DescribeCluster reports.
// Errors name the call and the cause; callers retry.
func (p *Provider) ResolveClusterCIDR(ctx context.Context) (string, error) {
	if p.settings.ClusterCIDR != "" {
		return p.settings.ClusterCIDR, nil
	}
	n := &p.network
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cidr != "" {
		return n.cidr, nil
	}
	out, err := n.eks.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(n.cluster)})
	if err != nil {
		return "", &ClusterCIDRError{fmt.Errorf("eks:DescribeCluster %s failed, so the cluster's service CIDR is unknown: %w; allow eks:DescribeCluster on the cluster to the controller's role", n.cluster, err)}
	}
	if out.Cluster == nil || out.Cluster.KubernetesNetworkConfig == nil {
		return "", &ClusterCIDRError{fmt.Errorf("eks:DescribeCluster %s returned no kubernetesNetworkConfig, so the cluster's service CIDR is unknown", n.cluster)}
	}
	cfg := out.Cluster.KubernetesNetworkConfig
	// An IPv4 range wins when both are reported, as in Karpenter.
	for _, cidr := range []*string{cfg.ServiceIpv4Cidr, cfg.ServiceIpv6Cidr} {
		if c := aws.ToString(cidr); c != "" {
			n.cidr = c
			return c, nil
		}
	}
	return "", &ClusterCIDRError{fmt.Errorf("eks:DescribeCluster %s reported neither serviceIpv4Cidr nor serviceIpv6Cidr (ipFamily %q)", n.cluster, cfg.IpFamily)}
}

// IPFamily is the cluster's IP family: that of the cluster DNS address
// (KubeDNSIP) when it was discovered, as Karpenter decides it, else that of
// the service CIDR once resolved; IPv4 until either is known.
func (p *Provider) IPFamily() corev1.IPFamily {
	if ip := net.ParseIP(p.settings.KubeDNSIP); ip != nil {
		return familyOf(ip)
	}
	cidr := p.settings.ClusterCIDR
	if cidr == "" {
		p.network.mu.Lock()
		cidr = p.network.cidr
		p.network.mu.Unlock()
	}
	if ip, _, err := net.ParseCIDR(cidr); err == nil {
		return familyOf(ip)
	}
	return corev1.IPv4Protocol
}

func familyOf(ip net.IP) corev1.IPFamily {
	if ip.To4() == nil && strings.Contains(ip.String(), ":") {
		return corev1.IPv6Protocol
	}
	return corev1.IPv4Protocol
}
