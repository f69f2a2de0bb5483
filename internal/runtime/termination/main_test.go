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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/events"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/state"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/termination"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

const cluster = "joist"

// The suite runs the termination controllers in a manager against a real
// apiserver and the AWS provider against the simulated EC2. The apiserver
// has no kubelet, so kubelet() plays its one part here: pods that are
// deleted gracefully are removed once their deletion is requested.
var (
	sim  *testenv.Sim
	kube client.Client
	ec2c *ec2.Client
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{
		AWS:   &awssim.Options{ClusterName: cluster, PendingDuration: 50 * time.Millisecond, ShuttingDownDuration: 300 * time.Millisecond},
		Cache: state.CacheOptions(),
		Controllers: func(ctx context.Context, mgr manager.Manager, env *testenv.Env) error {
			if err := state.Setup(ctx, mgr); err != nil {
				return err
			}
			rec, clk := events.NewRecorder(mgr.GetEventRecorder("karpenter")), clock.RealClock{}
			evictions := termination.NewEvictionQueue(mgr.GetClient(), rec)
			if err := mgr.Add(evictions); err != nil {
				return err
			}
			if err := termination.NewNodeController(mgr.GetClient(), env.Cloud, rec, clk, evictions).Register(mgr); err != nil {
				return err
			}
			if err := termination.NewNodeClaimController(mgr.GetClient(), env.Cloud, rec, clk).Register(mgr); err != nil {
				return err
			}
			kube = env.Kube.Client
			return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { kubelet(ctx); return nil }))
		},
	}, func(env *testenv.Env) error {
		sim, ec2c = env.Sim, ec2.NewFromConfig(env.Sim.Config)
		return nil
	}))
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
	// Tagged as the runtime tags its launches: it terminates nothing else.
	return launchTagged(t, map[string]string{
		"kubernetes.io/cluster/" + cluster: "owned", "eks:eks-cluster-name": cluster,
		"karpenter.sh/nodepool": "default", "karpenter.k8s.aws/ec2nodeclass": "default",
	})
}

// launchTagged runs one instance with tags.
func launchTagged(t *testing.T, with map[string]string) (providerID, instanceID string) {
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
	var tags []ec2types.Tag
	for k, v := range with {
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
