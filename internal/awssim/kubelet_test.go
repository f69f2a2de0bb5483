package awssim_test

import (
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// nodeConfig is user data as Karpenter writes it for AL2023.
const nodeConfig = `MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="//"

--//
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: kubelet-test
    apiServerEndpoint: https://127.0.0.1:6443
  kubelet:
    config:
      maxPods: 58
    flags:
    - --node-labels="karpenter.sh/nodepool=default,karpenter.sh/capacity-type=on-demand"
    - --register-with-taints="karpenter.sh/unregistered:NoExecute"

--//--
`

func startAPIServer(t *testing.T) *envtest.Environment {
	t.Helper()
	bin := os.Getenv("KUBEBUILDER_ASSETS")
	if bin == "" {
		bin = filepath.Join("..", "..", "bin")
	}
	if _, err := os.Stat(filepath.Join(bin, "kube-apiserver")); err != nil {
		t.Fatalf("kube-apiserver is missing from %s: build the Kubernetes binaries into bin/ first", bin)
	}
	env := &envtest.Environment{BinaryAssetsDirectory: bin, ControlPlaneStartTimeout: 2 * time.Minute}
	if _, err := env.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env
}

func TestRunningInstancesRegisterAsNodesAndLeaveWhenTerminated(t *testing.T) {
	env := startAPIServer(t)
	s := start(t, awssim.Options{ClusterName: "kubelet-test", RESTConfig: env.Config, BootDelay: 10 * time.Millisecond})
	kube := kubernetes.NewForConfigOrDie(env.Config)
	client := ec2.NewFromConfig(s.AWSConfig())

	cluster, err := awseks.NewFromConfig(s.AWSConfig()).DescribeCluster(ctx, &awseks.DescribeClusterInput{Name: aws.String("kubelet-test")})
	if err != nil {
		t.Fatal(err)
	}
	// EKS reports the API server's origin without a trailing slash.
	if got := *cluster.Cluster.Endpoint; got != strings.TrimRight(env.Config.Host, "/") || strings.HasSuffix(got, "/") {
		t.Fatalf("EKS cluster endpoint %q, kube-apiserver at %q", got, env.Config.Host)
	}

	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-arm64-standard-*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	launch := func(image *string, userData string, tags ...ec2types.Tag) ec2types.Instance {
		in := &ec2.RunInstancesInput{
			ImageId: image, InstanceType: "m7g.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			UserData: aws.String(base64.StdEncoding.EncodeToString([]byte(userData))),
			// The kubelet's ephemeral storage is the root volume.
			BlockDeviceMappings: []ec2types.BlockDeviceMapping{{DeviceName: aws.String("/dev/xvda"), Ebs: &ec2types.EbsBlockDevice{VolumeSize: aws.Int32(100)}}},
		}
		if len(tags) > 0 {
			in.TagSpecifications = []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}}
		}
		out, err := client.RunInstances(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		return out.Instances[0]
	}
	// The next instance tagged boot=fails fails to boot, as told over the
	// admin API.
	resp, err := http.Post(s.URL()+"/_awssim/kubelet/failed-boots", "application/json", strings.NewReader(`{"count":1,"tags":{"boot":"fails"}}`))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /_awssim/kubelet/failed-boots: %v %v", resp, err)
	}
	resp.Body.Close()
	// Every instance of a broken release fails to boot.
	release, err := s.PublishBrokenAMI("al2023", "arm64", "standard")
	if err != nil {
		t.Fatal(err)
	}
	loner := launch(images.Images[0].ImageId, "#!/bin/bash\necho joins nothing\n")
	broken := launch(images.Images[0].ImageId, nodeConfig, ec2types.Tag{Key: aws.String("boot"), Value: aws.String("fails")})
	ofBrokenRelease := launch(aws.String(release.ImageID), nodeConfig)
	joiner := launch(images.Images[0].ImageId, nodeConfig)

	var node *corev1.Node
	eventually(t, "the Node of "+*joiner.InstanceId, func() bool {
		node, err = kube.CoreV1().Nodes().Get(ctx, *joiner.PrivateDnsName, metav1.GetOptions{})
		return err == nil
	})
	zone := *joiner.Placement.AvailabilityZone
	if want := "aws:///" + zone + "/" + *joiner.InstanceId; node.Spec.ProviderID != want {
		t.Errorf("providerID %s, want %s", node.Spec.ProviderID, want)
	}
	for k, v := range map[string]string{
		"karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "on-demand", "kubernetes.io/arch": "arm64",
		"node.kubernetes.io/instance-type": "m7g.large", "topology.kubernetes.io/zone": zone, "topology.kubernetes.io/region": "us-west-2",
	} {
		if node.Labels[k] != v {
			t.Errorf("label %s=%q, want %q", k, node.Labels[k], v)
		}
	}
	// The API server's TaintNodesByCondition admission adds not-ready until
	// the node lifecycle controller sees the node Ready.
	taints := map[string]corev1.TaintEffect{}
	for _, taint := range node.Spec.Taints {
		taints[taint.Key] = taint.Effect
	}
	delete(taints, corev1.TaintNodeNotReady)
	if len(taints) != 1 || taints["karpenter.sh/unregistered"] != corev1.TaintEffectNoExecute {
		t.Errorf("taints %+v, want karpenter.sh/unregistered:NoExecute from the user data", node.Spec.Taints)
	}
	if node.Annotations["kwok.x-k8s.io/node"] != "fake" {
		t.Errorf("annotations %v lack the kwok mark", node.Annotations)
	}
	if e := node.Status.Capacity[corev1.ResourceEphemeralStorage]; e.Value() != 100<<30 {
		t.Errorf("ephemeral-storage capacity %s, want the 100Gi root volume", e.String())
	}
	if pods := node.Status.Capacity[corev1.ResourcePods]; pods.Value() != 58 {
		t.Errorf("pod capacity %s, want NodeConfig's maxPods 58", pods.String())
	}
	if cpu := node.Status.Capacity[corev1.ResourceCPU]; cpu.Value() != 2 {
		t.Errorf("cpu capacity %s, want m7g.large's 2", cpu.String())
	}
	if alloc, capa := node.Status.Allocatable[corev1.ResourceMemory], node.Status.Capacity[corev1.ResourceMemory]; alloc.Cmp(capa) >= 0 {
		t.Errorf("allocatable memory %s is not below capacity %s", alloc.String(), capa.String())
	}
	// All four ran before the joiner registered; the loner and the ones
	// whose boot failed have no Node.
	if _, err := kube.CoreV1().Nodes().Get(ctx, *loner.PrivateDnsName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an instance without join configuration registered: %v", err)
	}
	if _, err := kube.CoreV1().Nodes().Get(ctx, *broken.PrivateDnsName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an instance whose boot failed registered: %v", err)
	}
	if _, err := kube.CoreV1().Nodes().Get(ctx, *ofBrokenRelease.PrivateDnsName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("an instance of broken release %s registered: %v", release.ImageID, err)
	}

	if _, err := client.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{*joiner.InstanceId}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Node of the terminated instance to go", func() bool {
		_, err := kube.CoreV1().Nodes().Get(ctx, *joiner.PrivateDnsName, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
