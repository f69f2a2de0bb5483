package aws

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
)

// BootstrapOptions are the user data options every node of nc shares: how
// to reach the cluster, its service CIDR and IP family, the node class's
// user data, and kubelet (the node class's configuration, maybe with
// maxPods resolved) with clusterDNS defaulted to the kube-dns address, as
// Karpenter defaults it. Labels and taints are the caller's.
//
// The service CIDR is resolved (eks:DescribeCluster) when the family's
// bootstrap needs it (AL2023 always, AL2 on IPv6) or when it is the only
// way to learn the IP family (no kube-dns service was found).
func (p *Provider) BootstrapOptions(ctx context.Context, nc *awsv1.EC2NodeClass, kubelet awsv1.KubeletConfiguration) (userdata.Options, error) {
	family := nc.AMIFamily()
	o := userdata.Options{
		ClusterName: p.settings.ClusterName, ClusterEndpoint: p.settings.ClusterEndpoint,
		CABundle: p.settings.ClusterCABundle, Kubelet: kubelet, Custom: nc.Spec.UserData,
	}
	if family == awsv1.AMIFamilyAL2023 || p.settings.KubeDNSIP == "" ||
		(family == awsv1.AMIFamilyAL2 && p.IPFamily() == corev1.IPv6Protocol) {
		cidr, err := p.ResolveClusterCIDR(ctx)
		if err != nil {
			return o, err
		}
		o.ClusterCIDR = cidr
	}
	o.IPv6 = p.IPFamily() == corev1.IPv6Protocol
	if o.IPv6 && instancetype.OS(family) == string(corev1.Windows) {
		return o, fmt.Errorf("amiFamily %s: EKS runs Windows nodes in IPv4 clusters only, and this cluster is IPv6; use a Linux AMI family", family)
	}
	if _, set := kubelet["clusterDNS"]; !set && p.settings.KubeDNSIP != "" {
		raw, err := json.Marshal([]string{p.settings.KubeDNSIP})
		if err != nil {
			return o, err
		}
		o.Kubelet = kubelet.DeepCopy()
		if o.Kubelet == nil {
			o.Kubelet = awsv1.KubeletConfiguration{}
		}
		o.Kubelet["clusterDNS"] = apiextensionsv1.JSON{Raw: raw}
	}
	return o, nil
}
