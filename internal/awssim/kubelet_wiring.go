package awssim

import (
	"context"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/kubelet"
)

// startKubelet makes running instances that join the cluster register as
// Nodes through Options.RESTConfig, and removes them when they terminate.
func (s *Server) startKubelet(context.Context) error {
	k, err := kubelet.New(s.opts.RESTConfig, kubelet.Options{
		Region: s.opts.Region, BootDelay: s.opts.BootDelay, KubeletVersion: "v" + s.opts.KubernetesVersion + ".0",
		Logger: s.opts.Logger.WithName("kubelet"),
	})
	if err != nil {
		return err
	}
	s.EC2.Observe(k.Observe)
	s.kubelet = k
	return nil
}
