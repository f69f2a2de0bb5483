// Package testenv is the one boot of the integration tests: the simulated
// AWS (awssim) in-process on loopback, an envtest apiserver with the
// runtime's CRDs, the AWS cloud provider over both and a manager running
// the controllers under test (Main). Only tests import it.
package testenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	ec2sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// Sim is a running simulated AWS; its services (EC2, IAM, SSM, Pricing,
// ...) are the embedded server's fields.
type Sim struct {
	*awssim.Server
	// Config is an SDK config pointed at the simulator.
	Config aws.Config
	cancel context.CancelFunc
}

// Start runs the simulator.
func Start(opts awssim.Options) (*Sim, error) {
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := awssim.Start(ctx, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return &Sim{Server: srv, Config: srv.AWSConfig(), cancel: cancel}, nil
}

// Close stops the simulator.
func (s *Sim) Close() {
	s.Server.Close()
	s.cancel()
}

// PublishImage releases a new EKS-optimized image and points its SSM alias
// parameters at it, as an EKS AMI release does.
func (s *Sim) PublishImage(family, arch, variant string) (ec2sim.ImageRelease, error) {
	return s.PublishAMI(family, arch, variant)
}
