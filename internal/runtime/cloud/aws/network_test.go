package aws_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/controllers/nodeclass"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// An IPv6 cluster: until eks:DescribeCluster answers, AL2023 node classes
// are not valid and say why; once it does, they become Ready, and nodes
// launch with the IPv6 service range in their NodeConfig and an IPv6
// primary address.
func TestIPv6ClusterNodeClassesAndLaunches(t *testing.T) {
	ctx := testContext(t)
	const v6 = "joist-v6"
	s := settings()
	s.ClusterName, s.ClusterCIDR = v6, ""
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	// The node class selects the shared VPC's subnets (tagged for cluster).
	nc := testenv.NodeClass("ipv6-al2023", cluster, "al2023@latest")
	if err := kube.Client.Create(ctx, nc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Client.Delete(ctx, nc) })
	before := sim.Requests().Count("eks", "DescribeCluster")
	nodeclass.Resolve(ctx, p, nc)
	c := meta.FindStatusCondition(nc.Status.Conditions, v1.ConditionTypeValidationSucceeded)
	if c == nil || c.Status != "False" || c.Reason != "ClusterCIDRResolutionFailed" ||
		!strings.Contains(c.Message, "eks:DescribeCluster "+v6) || !strings.Contains(c.Message, "ResourceNotFoundException") {
		t.Fatalf("before the cluster exists, ValidationSucceeded = %+v; want False, ClusterCIDRResolutionFailed, naming the call and its error", c)
	}
	if meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) {
		t.Fatal("node class is Ready without a service CIDR")
	}

	if _, err := sim.EKS.RegisterCluster(eks.Cluster{Name: v6, Endpoint: "https://joist.example:6443", CertificateAuthorityPEM: []byte("ca"), IPFamily: "ipv6"}); err != nil {
		t.Fatal(err)
	}
	nodeclass.Resolve(ctx, p, nc)
	if !meta.IsStatusConditionTrue(nc.Status.Conditions, v1.ConditionTypeReady) {
		t.Fatalf("node class is not Ready once DescribeCluster answers: %+v", nc.Status.Conditions)
	}
	if n := sim.Requests().Count("eks", "DescribeCluster") - before; n != 2 {
		t.Errorf("%d DescribeCluster calls, want 2 (the failure, then the retry)", n)
	}
	if got := p.IPFamily(); got != corev1.IPv6Protocol {
		t.Errorf("IP family = %s, want IPv6 from the service range", got)
	}
	if err := kube.Client.Status().Update(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if err := kube.Client.Get(ctx, client.ObjectKeyFromObject(nc), nc); err != nil {
		t.Fatal(err)
	}

	claim := testenv.NodeClaim("ipv6", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	got, err := p.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Delete(ctx, got) })
	id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	if inst, _, ok := sim.EC2.Instance(id); !ok || aws.ToString(inst.Ipv6Address) == "" || len(inst.NetworkInterfaces) == 0 ||
		len(inst.NetworkInterfaces[0].Ipv6Addresses) != 1 || !aws.ToBool(inst.NetworkInterfaces[0].Ipv6Addresses[0].IsPrimaryIpv6) {
		t.Errorf("instance %s has no primary IPv6 address: %+v", id, inst.NetworkInterfaces)
	}
	var lt string
	for _, r := range sim.Requests().Requests("ec2", "CreateLaunchTemplate") {
		if r.Parameters["LaunchTemplateData.NetworkInterface.1.PrimaryIpv6"] == "true" {
			lt = fmt.Sprint(r.Parameters["LaunchTemplateName"])
			if n := r.Parameters["LaunchTemplateData.NetworkInterface.1.Ipv6AddressCount"]; n != "1" {
				t.Errorf("Ipv6AddressCount = %q, want 1", n)
			}
			if r.Parameters["LaunchTemplateData.NetworkInterface.1.DeviceIndex"] != "0" || r.Parameters["LaunchTemplateData.NetworkInterface.1.SecurityGroupId.1"] == "" {
				t.Errorf("the IPv6 interface is not the primary one with the security groups: %v", r.Parameters)
			}
		}
	}
	if lt == "" {
		t.Fatal("no CreateLaunchTemplate request asked for a primary IPv6 address")
	}
	data, ok := sim.EC2.LaunchTemplateData(lt)
	if !ok {
		t.Fatalf("launch template %s not in the simulator", lt)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := userdata.ParseMIME(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	var cfg userdata.NodeConfig
	if err := yaml.Unmarshal([]byte(parts[len(parts)-1].Body), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Spec.Cluster.CIDR != "fd5e:9a41:77c3::/108" {
		t.Errorf("NodeConfig cidr = %q, want the IPv6 service range DescribeCluster reported", cfg.Spec.Cluster.CIDR)
	}
}

// With kube-dns discovered, node classes without kubelet clusterDNS get
// its address, and its family is the cluster's.
func TestKubeDNSIsTheDefaultClusterDNS(t *testing.T) {
	ctx := testContext(t)
	s := settings()
	s.KubeDNSIP = "fd5e:9a41:77c3::a"
	s.ClusterCIDR = "fd5e:9a41:77c3::/108"
	p, err := awsprovider.New(sim.Config, kube.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	nc := testenv.NodeClass("kube-dns-al2", cluster, "al2@latest")
	o, err := p.BootstrapOptions(ctx, nc, nc.Spec.Kubelet)
	if err != nil {
		t.Fatal(err)
	}
	if dns := o.Kubelet.MustSettings().ClusterDNS; len(dns) != 1 || dns[0] != s.KubeDNSIP || !o.IPv6 {
		t.Errorf("clusterDNS = %v, IPv6 = %t; want [%s] and IPv6", dns, o.IPv6, s.KubeDNSIP)
	}
	nc.Spec.Kubelet = map[string]apiextensionsv1.JSON{"clusterDNS": {Raw: []byte(`["fd5e:9a41:77c3::53"]`)}}
	if o, err = p.BootstrapOptions(ctx, nc, nc.Spec.Kubelet); err != nil {
		t.Fatal(err)
	}
	if dns := o.Kubelet.MustSettings().ClusterDNS; len(dns) != 1 || dns[0] != "fd5e:9a41:77c3::53" {
		t.Errorf("clusterDNS = %v, want the node class's own", dns)
	}
	win := testenv.NodeClass("kube-dns-windows", cluster, "windows2022@latest")
	if _, err := p.BootstrapOptions(ctx, win, nil); err == nil || !strings.Contains(err.Error(), "IPv6") {
		t.Errorf("a Windows node class in an IPv6 cluster: err = %v, want one saying EKS has no IPv6 Windows nodes", err)
	}
}
