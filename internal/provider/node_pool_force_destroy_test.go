package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	awseks "github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// A provider whose cluster_name was copied from another cluster's (an
// alias pointing at staging, named for production): a forced destroy of
// staging's pool must not terminate production's instances of the pool of
// the same name, even when staging's claims name them. It fails, naming
// both clusters, and terminates nothing; with the right cluster_name the
// destroy goes through and production's instances still run.
func TestAccNodePoolForceDestroyProvesCluster(t *testing.T) {
	t.Parallel()
	const pool, prod = "copied", "copied-prod"
	if _, err := awsSim(t).EKS.RegisterCluster(awseks.Cluster{Name: prod, Endpoint: "https://copied-prod.gr7.us-west-2.eks.amazonaws.com", CertificateAuthorityPEM: []byte("another CA")}); err != nil {
		t.Fatal(err)
	}
	copied := strings.Replace(doomedPoolConfig(pool, true), `cluster_name = "`+testAWSCluster+`"`, `cluster_name = "`+prod+`"`, 1)
	prodRunning := func(want int) error {
		if n, err := liveInstances(prod, pool); err != nil || n != want {
			return fmt.Errorf("cluster %s's pool %s has %d instances running, want %d (%v)", prod, pool, n, want, err)
		}
		return nil
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy:             func(*terraform.State) error { return prodRunning(2) },
		Steps: []resource.TestStep{
			{Config: copied},
			{
				// Production's instances carry the names of staging's
				// claims, and staging's claims name them: only the
				// cluster's identity tells them apart.
				PreConfig: func() {
					names := []string{pool + "-claim-0", pool + "-claim-1"}
					ids := launchClaimInstances(t, prod, pool, names...)
					createClaims(t, pool, 2, v1.TerminationFinalizer)
					for i, id := range ids {
						setProviderID(t, names[i], "aws:///us-west-2a/"+id)
					}
				},
				Config:      copied,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`cluster_name\s+is\s+"copied-prod"[\s\S]*reaches[\s\S]*"joist"[\s\S]*Nothing\s+was\s+terminated`),
			},
			{
				PreConfig: func() { checkNotDeleting(t, nodePoolGVKResource, pool) },
				Config:    copied,
				Check:     func(*terraform.State) error { return prodRunning(2) },
			},
			// The final destroy, with this cluster's name, releases the
			// claims and leaves production's instances alone.
			{Config: doomedPoolConfig(pool, true)},
		},
	})
}

// An instance tagged for the pool in this cluster that no NodeClaim of the
// pool names (a claim of the pool existed under that name only in another
// cluster's state, or never) is left running; the claimed one is
// terminated.
func TestAccNodePoolForceDestroySparesUnclaimedInstances(t *testing.T) {
	t.Parallel()
	const pool = "unclaimed"
	var claimed, unclaimed []string
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			for _, c := range []struct {
				ids  []string
				want bool
			}{{claimed, false}, {unclaimed, true}} {
				running, err := instanceRunning(t, c.ids[0])
				if err != nil || running != c.want {
					return fmt.Errorf("instance %s running = %v after the forced destroy, want %v (%v)", c.ids[0], running, c.want, err)
				}
			}
			return nil
		},
		Steps: []resource.TestStep{{
			PreConfig: func() {
				claimed = launchClaimInstances(t, testAWSCluster, pool, pool+"-claim-0")
				unclaimed = launchClaimInstances(t, testAWSCluster, pool, pool+"-claim-elsewhere")
			},
			Config: doomedPoolConfig(pool, true),
			Check: func(*terraform.State) error {
				createClaims(t, pool, 1, v1.TerminationFinalizer)
				return nil
			},
		}},
	})
}

// instanceRunning reports whether awssim has the instance in a live state.
func instanceRunning(t *testing.T, id string) (bool, error) {
	t.Helper()
	out, err := ec2.NewFromConfig(testAWSConfig(t)).DescribeInstances(context.Background(), &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil || len(out.Reservations) != 1 || len(out.Reservations[0].Instances) != 1 {
		return false, fmt.Errorf("describing instance %s: %v", id, err)
	}
	return out.Reservations[0].Instances[0].State.Name == ec2types.InstanceStateNameRunning, nil
}

// setLease writes the leader Lease as a leader election would: held by
// holder, or released (no holder, a 1s duration) when holder is "".
func setLease(t *testing.T, holder string) {
	t.Helper()
	if err := writeLease(holder); err != nil {
		t.Fatal(err)
	}
}

func writeLease(holder string) error {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	spec := map[string]any{"leaseDurationSeconds": int64(15), "renewTime": now, "acquireTime": now, "holderIdentity": holder}
	if holder == "" {
		spec["leaseDurationSeconds"] = int64(1)
	}
	l := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
		"metadata": map[string]any{"name": leaderLeaseName, "namespace": "kube-system"},
		"spec":     spec,
	}}
	_, err := testCluster.kube.Resource(leaseGVR).Namespace("kube-system").Apply(context.Background(), leaderLeaseName, l, metav1.ApplyOptions{FieldManager: "leader-election", Force: true})
	return err
}

// takeLeaseAfter plays a standby that acquires the Lease after delay and
// renews it until the test ends.
func takeLeaseAfter(t *testing.T, delay time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for wait := delay; ; wait = 3 * time.Second {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
				_ = writeLease("controller-1")
			}
		}
	}()
}

// A forced destroy that starts while the leader Lease is between two
// replicas (released, not yet acquired) waits for the standby and lets it
// drain the pool: nothing is terminated directly. Not parallel: the Lease
// would tell the other destroy tests a controller is running.
func TestAccNodePoolForceDestroyWaitsOutLeaseHandOff(t *testing.T) {
	const pool = "handoff"
	var released *atomic.Int64
	var ids []string
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(leaseGVR).Namespace("kube-system").Delete(context.Background(), leaderLeaseName, metav1.DeleteOptions{})
	})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: doomedPoolConfig(pool, true)},
			{
				PreConfig: func() {
					ids = launchClaimInstances(t, testAWSCluster, pool, createClaims(t, pool, 2, v1.TerminationFinalizer)...)
					released = finishTerminations(t, pool, time.Second)
					// The leader has just released the Lease; the standby
					// takes it well within one lease duration (15s) and
					// keeps renewing it.
					setLease(t, "")
					takeLeaseAfter(t, 8*time.Second)
				},
				Config:  doomedPoolConfig(pool, true),
				Destroy: true,
				Check: func(*terraform.State) error {
					if n := released.Load(); n != 2 {
						return fmt.Errorf("the controller released %d of 2 NodeClaims; the rest were forced", n)
					}
					for _, id := range ids {
						if running, err := instanceRunning(t, id); err != nil || !running {
							return fmt.Errorf("instance %s was terminated by the destroy, not by the controller's drain (%v)", id, err)
						}
					}
					return nil
				},
			},
		},
	})
}
