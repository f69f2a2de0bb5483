package awssim

import (
	"context"
	"fmt"
	"os"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
)

// joinCluster registers the EKS cluster that Options.RESTConfig reaches, on
// the seeded network, and starts the kubelet stand-in for it.
func (s *Server) joinCluster(ctx context.Context) error {
	cfg := s.opts.RESTConfig
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return fmt.Errorf("awssim: reading the cluster CA %s: %w", cfg.CAFile, err)
		}
	}
	n := s.EC2.Network()
	if _, err := s.EKS.RegisterCluster(eks.Cluster{
		Name: s.opts.ClusterName, Endpoint: cfg.Host, CertificateAuthorityPEM: ca, Version: s.opts.KubernetesVersion,
		IPFamily: s.opts.IPFamily, VpcID: n.VpcID, SubnetIDs: n.PrivateSubnetIDs, SecurityGroupIDs: []string{n.NodeSecurityGroupID},
		ClusterSecurityGroupID: n.ClusterSecurityGroupID,
	}); err != nil {
		return fmt.Errorf("awssim: registering EKS cluster %s: %w", s.opts.ClusterName, err)
	}
	return s.startKubelet(ctx)
}
