package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/joistdev/terraform-provider-joist/internal/provider/crdschema"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	nodeclaimdisruption "github.com/joistdev/terraform-provider-joist/internal/runtime/nodeclaim/disruption"
)

// TestPreviewAgreesWithDriftController plans a NodePool change over claims
// that drift for different reasons, or not at all, then applies the change
// and lets the runtime's drift controller judge the same claims: the plan's
// count must be the controller's.
func TestPreviewAgreesWithDriftController(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const pool = "preview-agrees"
	r := NewNodePoolResource().(*NodePoolResource)
	r.clients = &clients{kubeKnown: true, kube: &kubernetesModel{ConfigPath: types.StringValue(testCluster.kubeconfig)}}

	spec := func(requirements ...any) map[string]any {
		return map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "a"}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
					"requirements": requirements,
					"expireAfter":  "720h",
				},
			},
			"disruption": map[string]any{"consolidateAfter": "1m", "consolidationPolicy": "WhenEmpty", "budgets": []any{map[string]any{"nodes": "10%"}}},
		}
	}
	arch := func(values ...any) any {
		return map[string]any{"key": "kubernetes.io/arch", "operator": "In", "values": values}
	}
	current := spec(arch("amd64", "arm64"))
	// The change narrows the architectures and requires a label some nodes lack.
	planned := spec(arch("amd64"), map[string]any{"key": "example.com/tier", "operator": "In", "values": []any{"web"}})
	attrs := func(spec map[string]any) map[string]attr.Value {
		a := crdschema.DecodeObject(r.kind.spec, spec, nil)
		a["name"] = types.StringValue(pool)
		return a
	}
	currentPool, err := r.typedNodePool(attrs(current))
	if err != nil {
		t.Fatal(err)
	}
	stale := currentPool.HashAnnotations()
	stale[v1.NodePoolHashAnnotationKey] = "made-from-an-older-template"
	for _, c := range []struct {
		name        string
		labels      map[string]any
		annotations map[string]string
	}{
		{"kept", map[string]any{"kubernetes.io/arch": "amd64", "example.com/tier": "web"}, currentPool.HashAnnotations()},
		{"arm", map[string]any{"kubernetes.io/arch": "arm64", "example.com/tier": "web"}, currentPool.HashAnnotations()},
		{"no-tier", map[string]any{"kubernetes.io/arch": "amd64"}, currentPool.HashAnnotations()},
		{"extra-label", map[string]any{"kubernetes.io/arch": "amd64", "example.com/tier": "web", "example.com/other": "x"}, currentPool.HashAnnotations()},
		{"unstamped", map[string]any{"kubernetes.io/arch": "amd64", "example.com/tier": "web"}, nil},
		{"stale-hash", map[string]any{"kubernetes.io/arch": "amd64", "example.com/tier": "web"}, stale},
	} {
		labels := map[string]any{v1.NodePoolLabelKey: pool, "team": "a"}
		for k, v := range c.labels {
			labels[k] = v
		}
		claim := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": map[string]any{"name": pool + "-" + c.name, "labels": labels},
			"spec": map[string]any{
				"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{arch("amd64", "arm64")},
			},
		}}
		if c.annotations != nil {
			claim.SetAnnotations(c.annotations)
		}
		created, err := testCluster.kube.Resource(nodeClaimGVR).Create(ctx, claim, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating NodeClaim %s: %v", claim.GetName(), err)
		}
		markLaunched(t, created)
	}
	t.Cleanup(func() { releaseClaims(pool) })

	preview, err := r.previewDisruption(ctx, attrs(planned), attrs(current))
	if err != nil {
		t.Fatal(err)
	}
	// arm (architecture), no-tier (a required label it lacks) and stale-hash.
	if preview.Drifted != 3 || preview.Total != 6 {
		t.Fatalf("preview: %s; want 3 of 6 drifted", preview)
	}

	// Apply the change as the hash controller leaves it, then judge.
	scheme := kruntime.NewScheme()
	for _, add := range []func(*kruntime.Scheme) error{clientgoscheme.AddToScheme, v1.AddToScheme, awsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	kube, err := client.New(testCluster.config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	plannedPool, err := r.typedNodePool(attrs(planned))
	if err != nil {
		t.Fatal(err)
	}
	plannedPool.Annotations = plannedPool.HashAnnotations()
	if err := kube.Create(ctx, plannedPool); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.Delete(context.Background(), plannedPool) })
	cloud, err := awsprovider.New(testCluster.aws.AWSConfig(), kube, awsprovider.Settings{
		ClusterName: "joist", ClusterEndpoint: "https://joist.example:6443", KubernetesVersion: "1.36",
	})
	if err != nil {
		t.Fatal(err)
	}
	controller := nodeclaimdisruption.NewController(kube, cloud, clock.RealClock{})
	claims := &v1.NodeClaimList{}
	if err := kube.List(ctx, claims, client.MatchingLabels{v1.NodePoolLabelKey: pool}); err != nil {
		t.Fatal(err)
	}
	drifted := 0
	for _, claim := range claims.Items {
		if _, err := controller.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&claim)}); err != nil {
			t.Fatalf("drift check of %s: %v", claim.Name, err)
		}
		judged := &v1.NodeClaim{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(&claim), judged); err != nil {
			t.Fatal(err)
		}
		for _, c := range judged.Status.Conditions {
			if c.Type == v1.ConditionTypeDrifted && c.Status == metav1.ConditionTrue {
				drifted++
			}
		}
	}
	if drifted != preview.Drifted {
		t.Errorf("the controller drifted %d claims, the preview counted %d", drifted, preview.Drifted)
	}
}
