package provider

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/joistdev/terraform-provider-joist/internal/controllerdeploy"
)

// proveCluster returns nil only when cluster, the provider's cluster_name,
// is the cluster the Kubernetes connection reaches: EKS's DescribeCluster
// puts that cluster at the connection's API server (same address, or the
// same CA), or, where EKS cannot say, the controller deployed through this
// connection runs with CLUSTER_NAME = cluster. A controller deployed with
// another CLUSTER_NAME is a contradiction whatever EKS says. Instances are
// found by the cluster's tags, so a forced destroy under a copied
// cluster_name would otherwise terminate another cluster's nodes.
func (c *clients) proveCluster(ctx context.Context, kube dynamic.Interface, cluster string) error {
	host, ca, err := c.kubeServer(ctx)
	if err != nil {
		return err
	}
	deployed, err := deployedClusterNames(ctx, kube)
	if err != nil {
		return err
	}
	for _, where := range slices.Sorted(maps.Keys(deployed)) {
		if deployed[where] != cluster {
			return errOtherCluster(cluster, "", fmt.Sprintf("the cluster at %s, whose controller (Deployment %s) runs with CLUSTER_NAME = %q", host, where, deployed[where]))
		}
	}
	cfg, err := c.AWS(ctx)
	if err != nil {
		return fmt.Errorf("force_destroy needs AWS access to check that cluster_name %q is the cluster the Kubernetes connection reaches: %w", cluster, err)
	}
	client := eks.NewFromConfig(cfg)
	out, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(cluster)})
	switch {
	case err == nil && sameServer(out.Cluster, host, ca):
		return nil
	case err == nil:
		reached := host
		if name := eksClusterAt(ctx, client, host, ca); name != "" {
			reached = fmt.Sprintf("EKS cluster %q (%s)", name, host)
		}
		return errOtherCluster(cluster, aws.ToString(out.Cluster.Endpoint), reached)
	case len(deployed) > 0:
		// Not an EKS cluster, or EKS is not readable: the controller's own
		// setting is the evidence left, and it agrees.
		return nil
	}
	return fmt.Errorf("force_destroy cannot prove that cluster_name %q is the cluster the Kubernetes connection reaches (%s): "+
		"EKS's DescribeCluster answered %v, and no joist controller Deployment there names its CLUSTER_NAME. Nothing was terminated. "+
		"Allow eks:DescribeCluster on the cluster, or deploy the controller (joist_controller) with cluster_name %q, and destroy again; "+
		"or set force_destroy = false", cluster, host, err, cluster)
}

// errOtherCluster says that cluster_name (whose API server is at
// clusterAt, when known) is not the cluster the connection reaches.
func errOtherCluster(cluster, clusterAt, reached string) error {
	if clusterAt != "" {
		clusterAt = " (API server " + clusterAt + ")"
	}
	return fmt.Errorf("force_destroy refuses to terminate instances: the provider's cluster_name is %q%s, "+
		"but the Kubernetes connection reaches %s. Nothing was terminated. Set cluster_name to the name of the cluster the "+
		"kubernetes block connects to (with provider aliases, each alias needs its own cluster's name), or point the kubernetes "+
		"block at cluster %q, and destroy again", cluster, clusterAt, reached, cluster)
}

// deployedClusterNames are the CLUSTER_NAME settings of the joist
// controller Deployments through the Kubernetes connection, by namespace/name.
func deployedClusterNames(ctx context.Context, kube dynamic.Interface) (map[string]string, error) {
	list, err := kube.Resource(deploymentsGVR).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + controllerdeploy.Name})
	if apierrors.IsForbidden(err) {
		return nil, nil // no evidence either way; EKS may still prove it
	}
	if err != nil {
		return nil, fmt.Errorf("listing the joist controller Deployments: %w", err)
	}
	out := map[string]string{}
	for i := range list.Items {
		env, err := controllerdeploy.Env(&list.Items[i])
		if err != nil || env["CLUSTER_NAME"] == "" {
			continue // not the controller, or its name comes from elsewhere
		}
		out[list.Items[i].GetNamespace()+"/"+list.Items[i].GetName()] = env["CLUSTER_NAME"]
	}
	return out, nil
}

// sameServer reports whether the EKS cluster is the API server at host:
// the same origin, or the same CA bundle (the address may be a proxy's or
// an alias, the CA is the cluster's own).
func sameServer(cl *ekstypes.Cluster, host string, ca []byte) bool {
	if cl == nil {
		return false
	}
	if origin(aws.ToString(cl.Endpoint)) == origin(host) {
		return true
	}
	if cl.CertificateAuthority == nil || len(ca) == 0 {
		return false
	}
	pem, err := base64.StdEncoding.DecodeString(aws.ToString(cl.CertificateAuthority.Data))
	return err == nil && bytes.Equal(bytes.TrimSpace(pem), bytes.TrimSpace(ca))
}

// origin is scheme://host:port of an API server address, lower-cased, with
// the scheme's default port filled in.
func origin(address string) string {
	address = strings.ToLower(strings.TrimSpace(address))
	if !strings.Contains(address, "://") {
		address = "https://" + address
	}
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return strings.TrimRight(address, "/")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return u.Scheme + "://" + u.Hostname() + ":" + port
}

// eksClusterAt names the account's EKS cluster at host, for the error
// message; "" when none is found.
func eksClusterAt(ctx context.Context, client *eks.Client, host string, ca []byte) string {
	pages := eks.NewListClustersPaginator(client, &eks.ListClustersInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return ""
		}
		for _, name := range page.Clusters {
			if out, err := client.DescribeCluster(ctx, &eks.DescribeClusterInput{Name: aws.String(name)}); err == nil && sameServer(out.Cluster, host, ca) {
				return name
			}
		}
	}
	return ""
}
