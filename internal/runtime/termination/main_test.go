package termination_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	ec2sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awstest"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/termination"
)

const cluster = "joist"

// The suite runs the termination controllers in a manager against a real
// apiserver and the AWS provider against the simulated EC2. The apiserver
// has no kubelet, so kubelet() plays its one part here: pods that are
// deleted gracefully are removed once their deletion is requested.
var (
	sim  *awstest.Sim
	kube client.Client
	ec2c *ec2.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	crlog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	sim, err = awstest.Start(ec2sim.Options{ClusterName: cluster, PendingDuration: 50 * time.Millisecond, ShuttingDownDuration: 300 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	k, err := awstest.StartKube()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = k.Env.Stop() }()
	provider, err := awsprovider.New(sim.Config, k.Client, awsprovider.Settings{
		ClusterName: cluster, ClusterEndpoint: "https://joist.example:6443", ClusterCABundle: "Q0E=",
		ClusterCIDR: "10.100.0.0/16", KubernetesVersion: "1.36",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mgr, err := manager.New(k.Config, manager.Options{
		Scheme: k.Scheme, Cache: state.CacheOptions(),
		Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := state.Setup(ctx, mgr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := termination.Register(mgr, provider, events.NewRecorder(mgr.GetEventRecorder("karpenter")), clock.RealClock{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	kube = k.Client
	ec2c = ec2.NewFromConfig(sim.Config)
	go kubelet(ctx)
	return m.Run()
}

// kubelet removes pods whose graceful deletion was requested, unless they
// carry the label slowKubelet (their deletion is then observed, not
// completed).
func kubelet(ctx context.Context) {
	for ctx.Err() == nil {
		pods := &corev1.PodList{}
		if err := kube.List(ctx, pods); err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if p.DeletionTimestamp != nil && p.Labels[slowKubelet] == "" {
					_ = kube.Delete(ctx, p, client.GracePeriodSeconds(0))
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

const slowKubelet = "test.joist.dev/slow-kubelet"

func launch(t *testing.T) (providerID, instanceID string) {
	t.Helper()
	ctx := testContext(t)
	images, err := ec2c.DescribeImages(ctx, &ec2.DescribeImagesInput{})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("no image to launch from: %v", err)
	}
	subnets, err := ec2c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	if err != nil || len(subnets.Subnets) == 0 {
		t.Fatalf("no subnet to launch into: %v", err)
	}
	// Tagged as the runtime tags its launches: it terminates nothing else.
	var tags []ec2types.Tag
	for k, v := range map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
		"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/ec2nodeclass": "default",
	} {
		tags = append(tags, ec2types.Tag{Key: sdkaws.String(k), Value: sdkaws.String(v)})
	}
	out, err := ec2c.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: "m5.large", MinCount: sdkaws.Int32(1), MaxCount: sdkaws.Int32(1),
		SubnetId:          subnets.Subnets[0].SubnetId,
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: tags}},
	})
	if err != nil {
		t.Fatal(err)
	}
	inst := out.Instances[0]
	return fmt.Sprintf("aws:///%s/%s", sdkaws.ToString(inst.Placement.AvailabilityZone), sdkaws.ToString(inst.InstanceId)), sdkaws.ToString(inst.InstanceId)
}

// instanceState is the simulated instance's state name.
func instanceState(t *testing.T, id string) string {
	t.Helper()
	out, err := ec2c.DescribeInstances(testContext(t), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	return string(out.Reservations[0].Instances[0].State.Name)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
