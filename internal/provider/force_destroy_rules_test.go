package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
)

func TestForcedTargets(t *testing.T) {
	inst := func(id string, tags map[string]string) ec2types.Instance {
		i := ec2types.Instance{InstanceId: aws.String(id)}
		for k, v := range tags {
			i.Tags = append(i.Tags, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		return i
	}
	launched := func(cluster, pool, claim string) map[string]string {
		tags := ownership.ClusterTags(cluster)
		tags[v1.NodePoolLabelKey] = pool
		if claim != "" {
			tags[ownership.NodeClaimTag] = claim
		}
		return tags
	}
	claims := map[string]string{"web-a": "i-a", "web-b": "", "web-c": "i-other"}
	terminate, spared := forcedTargets("blue", "web", claims, []ec2types.Instance{
		inst("i-a", launched("blue", "web", "web-a")),         // named by providerID
		inst("i-b", launched("blue", "web", "web-b")),         // named by its tag, not launched yet
		inst("i-orphan", launched("blue", "web", "web-gone")), // no claim of this cluster
		inst("i-untagged", launched("blue", "web", "")),       // no claim tag at all
		inst("i-other", launched("green", "web", "web-c")),    // a claim names another cluster's
		inst("i-pool", launched("blue", "api", "web-b")),      // another pool's
		inst("i-half", map[string]string{"kubernetes.io/cluster/blue": "owned", v1.NodePoolLabelKey: "web", ownership.NodeClaimTag: "web-b"}),
	})
	if want := []string{"i-a", "i-b"}; fmt.Sprint(terminate) != fmt.Sprint(want) {
		t.Errorf("terminate %v, want %v", terminate, want)
	}
	for id, why := range map[string]string{
		"i-orphan":   "no NodeClaim of the pool in this cluster names it",
		"i-untagged": "no NodeClaim of the pool in this cluster names it",
		"i-other":    `NodeClaim web-c names it, but its eks:eks-cluster-name tag is "green"`,
		"i-pool":     `karpenter.sh/nodepool tag is "api", not "web"`,
		"i-half":     "no eks:eks-cluster-name tag",
	} {
		if !strings.Contains(spared[id], why) {
			t.Errorf("spared[%s] = %q, want it to say %q", id, spared[id], why)
		}
	}
	if len(spared) != 5 {
		t.Errorf("spared %v, want 5 instances", spared)
	}
	var diags diag.Diagnostics
	(&forcedDestroy{pool: "web", spared: spared}).warn(&diags)
	if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), "i-orphan: tagged for node pool web in cluster blue") {
		t.Errorf("warning %v, want one naming i-orphan and why", diags)
	}
}

func TestOrigin(t *testing.T) {
	for a, b := range map[string]string{
		"https://ABC.gr7.us-west-2.eks.amazonaws.com": "https://abc.gr7.us-west-2.eks.amazonaws.com:443/",
		"https://127.0.0.1:6443":                      "https://127.0.0.1:6443/",
		"abc.gr7.us-west-2.eks.amazonaws.com":         "https://abc.gr7.us-west-2.eks.amazonaws.com",
	} {
		if origin(a) != origin(b) {
			t.Errorf("origin(%q) = %q, origin(%q) = %q, want equal", a, origin(a), b, origin(b))
		}
	}
	if origin("https://127.0.0.1:6443") == origin("https://127.0.0.1:6444") {
		t.Error("two ports are one server")
	}
}

// TestControllerGoneSeesHandOff: the leader releases its Lease and a
// standby acquires it after the first look; controllerGone watches the
// Lease through the hand-off and finds the controller running. Not
// parallel: the Lease is the whole cluster's.
func TestControllerGoneSeesHandOff(t *testing.T) {
	setLease(t, "")
	t.Cleanup(func() {
		_ = testCluster.kube.Resource(leaseGVR).Namespace("kube-system").Delete(context.Background(), leaderLeaseName, metav1.DeleteOptions{})
	})
	var seen []leaseSighting
	gone, why, err := controllerGone(context.Background(), testCluster.kube, 10*time.Millisecond, func(s leaseSighting) {
		seen = append(seen, s)
		if len(seen) == 1 {
			setLease(t, "controller-1") // the standby takes over
		}
	})
	if err != nil || gone {
		t.Fatalf("controllerGone = %v (%s, %v) through a hand-off, want a running controller", gone, why, err)
	}
	if len(seen) != 2 || seen[0].Running || !strings.Contains(seen[0].Why, "has no holder") || !seen[1].Running {
		t.Errorf("sightings %+v, want the released Lease, then the new holder", seen)
	}
	if seen[0].Window != 15*time.Second {
		t.Errorf("watched for %s, want the controller's lease duration (15s), not the released Lease's 1s", seen[0].Window)
	}
}

// Where EKS does not know cluster_name (a cluster EKS does not manage),
// the controller deployed through the connection is the evidence: its
// CLUSTER_NAME proves the name, and a controller deployed with another
// name contradicts even a name EKS places at the connection's API server.
// Not parallel: the Deployment speaks for the whole sandbox.
func TestProveClusterByControllerDeployment(t *testing.T) {
	c := &clients{kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}, kubeKnown: true, aws: &awsModel{}, awsKnown: true}
	ctx := context.Background()
	if err := c.proveCluster(ctx, testCluster.kube, testAWSCluster); err != nil {
		t.Fatalf("EKS places cluster %s at the sandbox's API server, yet: %v", testAWSCluster, err)
	}
	if err := c.proveCluster(ctx, testCluster.kube, "self-managed"); err == nil || !strings.Contains(err.Error(), "cannot prove") {
		t.Fatalf("no evidence for cluster self-managed, yet proveCluster = %v", err)
	}
	deploy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": controllerdeploy.Name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "proof"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "proof"}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": controllerdeploy.Name, "image": "joist",
					"env": []any{map[string]any{"name": "CLUSTER_NAME", "value": "self-managed"}},
				}}},
			},
		},
	}}
	deployments := testCluster.kube.Resource(deploymentsGVR).Namespace("default")
	if _, err := deployments.Create(ctx, deploy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = deployments.Delete(context.Background(), controllerdeploy.Name, metav1.DeleteOptions{}) })
	if err := c.proveCluster(ctx, testCluster.kube, "self-managed"); err != nil {
		t.Errorf("the controller runs with CLUSTER_NAME = self-managed, yet: %v", err)
	}
	err := c.proveCluster(ctx, testCluster.kube, testAWSCluster)
	if err == nil || !strings.Contains(err.Error(), `cluster_name is "joist"`) || !strings.Contains(err.Error(), `CLUSTER_NAME = "self-managed"`) {
		t.Errorf("the controller runs with CLUSTER_NAME = self-managed and cluster_name is joist, yet proveCluster = %v", err)
	}
}
