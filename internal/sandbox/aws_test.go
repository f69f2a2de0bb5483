package sandbox

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

const al2023UserData = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: %s
    apiServerEndpoint: %s
    certificateAuthority: %s
    cidr: 10.100.0.0/16
  kubelet:
    config:
      maxPods: 29
    flags:
    - --node-labels=team=payments,karpenter.sh/nodepool=default
    - --register-with-taints=karpenter.sh/unregistered:NoExecute

--//--
`

// TestFleetInstanceBecomesReadyNode launches an instance through CreateFleet
// with AL2023 user data and expects the Node a real EKS node would register:
// named for its private DNS name, with the providerID, labels and taint from
// the user data, kept Ready by kwok, running a pod bound to it.
func TestFleetInstanceBecomesReadyNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const cluster = "sandbox-aws"
	sb, err := Start(ctx, Options{BinDir: binDir(t), AWS: &awssim.Options{ClusterName: cluster}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	if got := sb.Env()["AWS_ENDPOINT_URL"]; got != sb.AWS.URL() {
		t.Fatalf("Env() AWS_ENDPOINT_URL = %q, want %q", got, sb.AWS.URL())
	}
	cfg := sb.AWS.AWSConfig()

	// The EKS cluster awssim reports is this sandbox.
	dc, err := eks.NewFromConfig(cfg).DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSuffix(aws.ToString(dc.Cluster.Endpoint), "/") != strings.TrimSuffix(sb.Config.Host, "/") {
		t.Fatalf("DescribeCluster endpoint %q, want the sandbox apiserver %q", aws.ToString(dc.Cluster.Endpoint), sb.Config.Host)
	}

	client := ec2.NewFromConfig(cfg)
	subnets, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:karpenter.sh/discovery"), Values: []string{cluster}},
	}})
	if err != nil || len(subnets.Subnets) == 0 {
		t.Fatalf("discovery-tagged subnets: %v (err %v)", subnets, err)
	}
	subnet := subnets.Subnets[0]
	param, err := ssm.NewFromConfig(cfg).GetParameter(ctx, &ssm.GetParameterInput{
		Name: aws.String("/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/standard/recommended/image_id"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ud := fmt.Sprintf(al2023UserData, cluster, sb.Config.Host, base64.StdEncoding.EncodeToString(sb.Config.CAData))
	lt, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("sandbox-al2023"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId:  param.Parameter.Value,
			UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(ud))),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	fleet, err := client.CreateFleet(ctx, &ec2.CreateFleetInput{
		Type: ec2types.FleetTypeInstant,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity: aws.Int32(1), DefaultTargetCapacityType: ec2types.DefaultTargetCapacityTypeOnDemand,
		},
		LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{
				LaunchTemplateId: lt.LaunchTemplate.LaunchTemplateId, Version: aws.String("$Latest"),
			},
			Overrides: []ec2types.FleetLaunchTemplateOverridesRequest{{
				InstanceType: ec2types.InstanceTypeM5Large, SubnetId: subnet.SubnetId,
			}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(fleet.Instances) != 1 || len(fleet.Instances[0].InstanceIds) != 1 {
		t.Fatalf("CreateFleet launched %+v, errors %+v", fleet.Instances, fleet.Errors)
	}
	id := fleet.Instances[0].InstanceIds[0]
	providerID := fmt.Sprintf("aws:///%s/%s", aws.ToString(subnet.AvailabilityZone), id)

	cs := kubernetes.NewForConfigOrDie(sb.Config)
	var node *corev1.Node
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range nodes.Items {
			n := &nodes.Items[i]
			if n.Spec.ProviderID == providerID && nodeReady(n) {
				node = n
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready node with providerID %s: %v", providerID, err)
	}
	desc, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	dns := aws.ToString(desc.Reservations[0].Instances[0].PrivateDnsName)
	if node.Name != dns {
		t.Errorf("node name %q, want the private DNS name %q", node.Name, dns)
	}
	if node.Labels["team"] != "payments" || node.Labels["karpenter.sh/nodepool"] != "default" {
		t.Errorf("node labels %v lack the user data's --node-labels", node.Labels)
	}
	if node.Labels[corev1.LabelInstanceTypeStable] != "m5.large" || node.Labels[corev1.LabelTopologyZone] != aws.ToString(subnet.AvailabilityZone) {
		t.Errorf("node labels %v lack the instance type / zone", node.Labels)
	}
	hasTaint := false
	for _, tn := range node.Spec.Taints {
		if tn.Key == "karpenter.sh/unregistered" && tn.Effect == corev1.TaintEffectNoExecute {
			hasTaint = true
		}
	}
	if !hasTaint {
		t.Errorf("node taints %v lack karpenter.sh/unregistered:NoExecute", node.Spec.Taints)
	}
	if cpu := node.Status.Allocatable.Cpu(); cpu.Cmp(resource.MustParse("2")) > 0 || cpu.IsZero() {
		t.Errorf("allocatable cpu %s: want the m5.large's 2 vCPU less reservations", cpu)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-fleet-node", Namespace: "default"},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "payments"},
			Tolerations:  []corev1.Toleration{{Key: "karpenter.sh/unregistered", Operator: corev1.TolerationOpExists}},
			Containers:   []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Spec.NodeName == node.Name && p.Status.Phase == corev1.PodRunning, err
	})
	if err != nil {
		t.Fatalf("pod did not run on %s: %v", node.Name, err)
	}

	// Terminating the instance removes its Node, as the cloud node lifecycle controller would.
	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("node %s still present after its instance terminated", node.Name)
	}
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}
