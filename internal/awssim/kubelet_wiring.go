package awssim

import (
	"context"
	"errors"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/kubelet"
)

// startKubelet makes running instances that join the cluster register as
// Nodes through Options.RESTConfig, and removes them when they terminate.
func (s *Server) startKubelet(context.Context) error {
	k, err := kubelet.New(s.opts.RESTConfig, kubelet.Options{
		Region: s.opts.Region, BootDelay: s.opts.BootDelay, KubeletVersion: "v" + s.opts.KubernetesVersion + ".0",
		ImageFamily: s.EC2.ImageFamily, EphemeralGiB: s.EC2.EphemeralGiB, Logger: s.opts.Logger.WithName("kubelet"),
	})
	if err != nil {
		return err
	}
	s.EC2.Observe(k.Observe)
	s.kubelet = k
	return nil
}

// FailBoots makes the next n instances carrying tags that run fail to
// boot: they never register as Nodes, as when a node's bootstrap breaks
// (see kubelet.Kubelet.FailBoots). It needs Options.RESTConfig.
func (s *Server) FailBoots(n int, tags map[string]string) error {
	s.mu.Lock()
	k := s.kubelet
	s.mu.Unlock()
	if k == nil {
		return errors.New("awssim: no kubelet stand-in: start with Options.RESTConfig")
	}
	k.FailBoots(n, tags)
	return nil
}
