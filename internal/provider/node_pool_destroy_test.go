package provider

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func doomedPoolConfig(name string, force bool) string {
	return providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name          = %q
  force_destroy = %t
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = []
    }
  }
}
`, name, force)
}

// testAWSConfig is the AWS the provider under test reaches: whatever the
// SDK's standard environment points at.
func testAWSConfig(t *testing.T) aws.Config {
	t.Helper()
	cfg, err := (&awsModel{}).config(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// launchPoolInstances starts n instances in awssim tagged as the pool's, as
// the controller would have.
func launchPoolInstances(t *testing.T, pool string, n int32) {
	t.Helper()
	ctx := context.Background()
	client := ec2.NewFromConfig(testAWSConfig(t))
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("no AMI in awssim: %v", err)
	}
	_, err = client.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM5Large,
		MinCount: aws.Int32(n), MaxCount: aws.Int32(n),
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeInstance,
			Tags:         []ec2types.Tag{{Key: aws.String(v1.NodePoolLabelKey), Value: aws.String(pool)}},
		}},
	})
	if err != nil {
		t.Fatalf("RunInstances: %v", err)
	}
}

// liveInstances counts the pool's instances that are not terminating.
func liveInstances(pool string) (int, error) {
	cfg, err := (&awsModel{}).config(context.Background())
	if err != nil {
		return 0, err
	}
	client := ec2.NewFromConfig(cfg)
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped"}},
	}})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range out.Reservations {
		n += len(r.Instances)
	}
	return n, nil
}

func TestAccNodePoolDestroyWithoutController(t *testing.T) {
	t.Parallel()
	const pool = "doomed"
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: resource.ComposeTestCheckFunc(
			checkGone(nodePoolGVKResource, pool),
			func(*terraform.State) error {
				if claims, err := poolClaims(context.Background(), testCluster.kube, pool); err != nil || len(claims) != 0 {
					return fmt.Errorf("NodeClaims left after force_destroy: %d (%v)", len(claims), err)
				}
				if n, err := liveInstances(pool); err != nil || n != 0 {
					return fmt.Errorf("%d instances of node pool %s still running in awssim (%v)", n, pool, err)
				}
				return nil
			},
		),
		Steps: []resource.TestStep{
			{Config: doomedPoolConfig(pool, false)},
			{
				// Claims with termination finalizers and no controller: destroy
				// fails at once and says what to do, leaving everything as it was.
				PreConfig: func() {
					launchPoolInstances(t, pool, 2)
					createClaims(t, pool, 2, v1.TerminationFinalizer)
				},
				Config:      doomedPoolConfig(pool, false),
				Destroy:     true,
				ExpectError: regexp.MustCompile(`node pool doomed has 2 NodeClaims[\s\S]*no\s+controller\s+is\s+running[\s\S]*force_destroy\s+=\s+true`),
			},
			{
				PreConfig: func() { checkNotDeleting(t, nodePoolGVKResource, pool) },
				Config:    doomedPoolConfig(pool, true),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(nodePoolAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					if n, err := liveInstances(pool); err != nil || n != 2 {
						return fmt.Errorf("want the 2 instances still running before the forced destroy, have %d (%v)", n, err)
					}
					return nil
				},
			},
			// The test's final destroy runs with force_destroy = true.
		},
	})
}
