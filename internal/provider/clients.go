package provider

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
)

// errNotKnownYet is returned while a client's settings depend on values
// Terraform learns only during apply.
var errNotKnownYet = errors.New("the provider's connection settings are not known until apply")

// clients builds the Kubernetes and AWS clients the first time they are
// needed, never in Configure: planning resources that are being created
// must work before the cluster exists.
type clients struct {
	clusterName string
	// clusterKnown is false while cluster_name waits on a value Terraform
	// learns only during apply (a cluster created in the same run).
	clusterKnown bool
	// failOnUnplaceablePods turns a planned change that leaves pods
	// without a node pool from a warning into an error.
	failOnUnplaceablePods bool

	kube      *kubernetesModel
	kubeKnown bool
	aws       *awsModel
	awsKnown  bool

	mu      sync.Mutex
	rest    *rest.Config
	dynamic dynamic.Interface
	awsCfg  *aws.Config
}

// Kubernetes returns a dynamic client of the cluster.
func (c *clients) Kubernetes(ctx context.Context) (dynamic.Interface, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dynamic != nil {
		return c.dynamic, nil
	}
	if !c.kubeKnown {
		return nil, errNotKnownYet
	}
	cfg, err := c.kube.restConfig(ctx)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	c.rest, c.dynamic = cfg, d
	return d, nil
}

// AWS returns the SDK configuration.
func (c *clients) AWS(ctx context.Context) (aws.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.awsCfg != nil {
		return *c.awsCfg, nil
	}
	if !c.awsKnown {
		return aws.Config{}, errNotKnownYet
	}
	cfg, err := c.aws.config(ctx)
	if err != nil {
		return aws.Config{}, err
	}
	c.awsCfg = &cfg
	return cfg, nil
}

// kubeServer is the API server the Kubernetes connection reaches and the
// CA bundle it trusts there (none when it skips verification).
func (c *clients) kubeServer(ctx context.Context) (host string, ca []byte, err error) {
	if _, err := c.Kubernetes(ctx); err != nil {
		return "", nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ca = c.rest.CAData
	if len(ca) == 0 && c.rest.CAFile != "" {
		if ca, err = os.ReadFile(c.rest.CAFile); err != nil {
			return "", nil, fmt.Errorf("reading the Kubernetes connection's CA file: %w", err)
		}
	}
	return c.rest.Host, ca, nil
}

// kubernetesVersion is the API server's minor version ("1.36"), which the
// AMI aliases' parameters name.
func (c *clients) kubernetesVersion(ctx context.Context) (string, error) {
	if _, err := c.Kubernetes(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	cfg := c.rest
	c.mu.Unlock()
	return ami.ServerVersion(cfg)
}
