package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
)

func doomedPoolConfig(name string, force bool) string {
	return awsProviderBlock() + fmt.Sprintf(`
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

// launchPoolInstances starts n instances in awssim tagged as the pool's in
// the cluster, as the controller would have, for no NodeClaim; it returns
// their IDs.
func launchPoolInstances(t *testing.T, cluster, pool string, n int) []string {
	t.Helper()
	return launchClaimInstances(t, cluster, pool, make([]string, n)...)
}

// launchClaimInstances starts one instance in awssim per claim of the
// cluster's pool, tagged as the controller's launch for it tags it (no
// NodeClaim tag for ""); it returns their IDs in order.
func launchClaimInstances(t *testing.T, cluster, pool string, claims ...string) []string {
	t.Helper()
	ctx := context.Background()
	client := ec2.NewFromConfig(testAWSConfig(t))
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}})
	if err != nil || len(images.Images) == 0 {
		t.Fatalf("no AMI in awssim: %v", err)
	}
	var ids []string
	for _, claim := range claims {
		tags := ownership.ClusterTags(cluster)
		tags[v1.NodePoolLabelKey], tags[v1.LabelNodeClass] = pool, "default"
		if claim != "" {
			tags[ownership.NodeClaimTag] = claim
		}
		var spec []ec2types.Tag
		for k, v := range tags {
			spec = append(spec, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		out, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
			ImageId: images.Images[0].ImageId, InstanceType: ec2types.InstanceTypeM5Large,
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: spec}},
		})
		if err != nil {
			t.Fatalf("RunInstances: %v", err)
		}
		ids = append(ids, aws.ToString(out.Instances[0].InstanceId))
	}
	return ids
}

// liveInstances counts the pool's instances in the cluster that are not
// terminating.
func liveInstances(cluster, pool string) (int, error) {
	cfg, err := (&awsModel{}).config(context.Background())
	if err != nil {
		return 0, err
	}
	client := ec2.NewFromConfig(cfg)
	out, err := client.DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.NodePoolLabelKey), Values: []string{pool}},
		{Name: aws.String("tag:kubernetes.io/cluster/" + cluster), Values: []string{"owned"}},
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
				if n, err := liveInstances(testAWSCluster, pool); err != nil || n != 0 {
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
					launchClaimInstances(t, testAWSCluster, pool, createClaims(t, pool, 2, v1.TerminationFinalizer)...)
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
					if n, err := liveInstances(testAWSCluster, pool); err != nil || n != 2 {
						return fmt.Errorf("want the 2 instances still running before the forced destroy, have %d (%v)", n, err)
					}
					return nil
				},
			},
			// The test's final destroy runs with force_destroy = true.
		},
	})
}

// Two clusters in one account, each with a pool of the same name: a forced
// destroy in one terminates only its own instances (named by its claims'
// providerID or NodeClaim tag), even when one of its NodeClaims names the
// other cluster's instance.
func TestAccNodePoolForceDestroyStaysInItsCluster(t *testing.T) {
	t.Parallel()
	const pool = "shared-name"
	var ours, other []string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if n, err := liveInstances(testAWSCluster, pool); err != nil || n != 0 {
				return fmt.Errorf("%d instances of node pool %s still running in cluster %s (%v)", n, pool, testAWSCluster, err)
			}
			if n, err := liveInstances("other-cluster", pool); err != nil || n != 3 {
				return fmt.Errorf("the other cluster's pool of the same name has %d of its 3 instances left (%v)", n, err)
			}
			return nil
		},
		Steps: []resource.TestStep{{
			PreConfig: func() {
				// The first launch's claim has its providerID yet; the
				// second's instance names its claim in a tag only.
				ours = launchClaimInstances(t, testAWSCluster, pool, "", pool+"-claim-2")
				other = launchPoolInstances(t, "other-cluster", pool, 3)
			},
			Config: doomedPoolConfig(pool, true),
			Check: func(*terraform.State) error {
				// A claim of this cluster whose providerID points at the other
				// cluster's instance: force_destroy must not trust it.
				claims := createClaims(t, pool, 3, v1.TerminationFinalizer)
				setProviderID(t, claims[0], "aws:///us-west-2a/"+other[0])
				setProviderID(t, claims[1], "aws:///us-west-2a/"+ours[0])
				return nil
			},
		}},
	})
}

// A pool with force_destroy and no cluster_name in the provider: the plan
// fails before anything is applied, naming the attribute to set; a destroy
// plan of such a pool fails too.
func TestAccNodePoolForceDestroyNeedsCluster(t *testing.T) {
	t.Parallel()
	const pool = "no-cluster"
	config := providerBlock() + fmt.Sprintf(`
resource "joist_node_pool" "test" {
  name          = %q
  force_destroy = true
  template = {
    spec = {
      node_class_ref = { group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }
      requirements   = []
    }
  }
}
`, pool)
	want := regexp.MustCompile(`force_destroy needs the cluster's name[\s\S]*set\s+cluster_name\s+in\s+the\s+provider\s+block`)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config, PlanOnly: true, ExpectError: want},
			// Created with the cluster known, then destroyed without it.
			{Config: doomedPoolConfig(pool, true)},
			{Config: strings.Replace(doomedPoolConfig(pool, true), `cluster_name = "`+testAWSCluster+`"`, "", 1), Destroy: true, ExpectError: want},
			{Config: doomedPoolConfig(pool, true)},
		},
	})
}

// setProviderID records the claim's instance in its status.
func setProviderID(t *testing.T, name, providerID string) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"providerID":%q}}`, providerID)
	if _, err := testCluster.kube.Resource(nodeClaimGVR).Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("setting the providerID of NodeClaim %s: %v", name, err)
	}
}
