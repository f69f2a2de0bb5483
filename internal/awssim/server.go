package awssim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eks"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/eventbridge"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/fault"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/iam"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/kubelet"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/pricing"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sqs"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/ssm"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/sts"
)

// Server is a running local AWS. Its service fields are the simulated
// services, for tests and tools that drive them through their Go APIs.
type Server struct {
	opts Options

	EC2         *ec2.Service
	SSM         *ssm.Service
	Pricing     *pricing.Service
	SQS         *sqs.Service
	EventBridge *eventbridge.Service
	IAM         *iam.Service
	STS         *sts.Service
	EKS         *eks.Service

	services map[string]http.Handler // by SigV4 signing name
	recorder *Recorder
	faults   *fault.Injector
	admin    http.Handler
	kubelet  *kubelet.Kubelet

	mu       sync.Mutex
	listener net.Listener
	http     *http.Server
	served   chan struct{}
}

// New builds a Server and its services; Start makes it listen.
func New(opts Options) (*Server, error) {
	opts = opts.withDefaults()
	s := &Server{opts: opts, recorder: &Recorder{}, faults: fault.NewInjector(opts.FaultSeed)}
	s.SQS = sqs.New(opts.AccountID, opts.Region)
	s.EventBridge = eventbridge.New(opts.AccountID, opts.Region, s.SQS)
	s.IAM = iam.New(opts.AccountID)
	s.STS = sts.New(opts.AccountID, s.IAM)
	// SSE-KMS queues hold callers to their IAM policies.
	s.SQS.SetAuthorizer(s.STS.Authorize)
	s.EKS = eks.New(opts.AccountID, opts.Region, s.IAM)
	s.SSM = ssm.New(opts.Region)
	var err error
	if s.Pricing, err = pricing.New(); err != nil {
		return nil, err
	}
	s.EC2, err = ec2.New(ec2.Options{
		Region: opts.Region, AccountID: opts.AccountID, ClusterName: opts.ClusterName, KubernetesVersion: opts.KubernetesVersion,
		PendingDuration: opts.PendingDuration, ShuttingDownDuration: opts.ShuttingDownDuration,
		SpotInterruptionNotice: opts.SpotInterruptionNotice, DefaultPoolCapacity: opts.DefaultPoolCapacity,
		Events: eventSink{s.EventBridge},
		InstanceProfiles: func(nameOrARN string) (string, string, bool) {
			p, ok := s.IAM.InstanceProfile(nameOrARN)
			return p.ARN, p.ID, ok
		},
	})
	if err != nil {
		return nil, err
	}
	for _, r := range append(s.EC2.Images(), s.EC2.PreviousMinorImages()...) {
		if err := s.publishAMIParameters(r); err != nil {
			return nil, err
		}
	}
	s.services = map[string]http.Handler{
		"ec2": s.EC2, "ssm": s.SSM, "pricing": s.Pricing, "sqs": s.SQS, "events": s.EventBridge,
		"iam": s.IAM, "sts": s.STS, "eks": s.EKS,
	}
	s.admin = s.adminHandler()
	return s, nil
}

// Start creates a Server with opts and starts it; it stops when ctx ends.
func Start(ctx context.Context, opts Options) (*Server, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		s.EC2.Close()
		return nil, err
	}
	return s, nil
}

// Start listens on Options.Addr and serves until ctx ends or Close is called.
// With Options.RESTConfig it also registers the EKS cluster and starts the
// kubelet stand-in.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener != nil {
		return errors.New("awssim: already started")
	}
	ln, err := net.Listen("tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("awssim: listen on %s: %w (set Options.Addr to a free loopback address)", s.opts.Addr, err)
	}
	if s.opts.RESTConfig != nil {
		if err := s.joinCluster(ctx); err != nil {
			ln.Close()
			return err
		}
	}
	s.listener = ln
	// The goroutines keep their own references: Close clears the fields.
	srv, served := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}, make(chan struct{})
	s.http, s.served = srv, served
	go func() {
		defer close(served)
		_ = srv.Serve(ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-served:
		}
	}()
	s.opts.Logger.Info("local AWS listening", "url", "http://"+ln.Addr().String(), "region", s.opts.Region, "cluster", s.opts.ClusterName)
	return nil
}

// URL is the endpoint clients use, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listener == nil {
		return ""
	}
	return "http://" + s.listener.Addr().String()
}

// Close stops serving, the instance lifecycle and the kubelet stand-in.
func (s *Server) Close() {
	s.mu.Lock()
	srv, served, kubelet := s.http, s.served, s.kubelet
	s.http, s.kubelet = nil, nil
	s.mu.Unlock()
	if srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
		<-served
	}
	s.EC2.Close()
	if kubelet != nil {
		kubelet.Close()
	}
}

// Operations lists the operations each service (by signing name) serves,
// with the input constraints it checks them against.
func (s *Server) Operations() map[string]constraint.Operations {
	out := map[string]constraint.Operations{}
	for name, h := range s.services {
		if o, ok := h.(interface{ Operations() constraint.Operations }); ok {
			out[name] = o.Operations()
		}
	}
	return out
}

// Requests is the request log.
func (s *Server) Requests() *Recorder { return s.recorder }

// Faults is the fault injector.
func (s *Server) Faults() *fault.Injector { return s.faults }

// Options returns the options in effect, defaults applied.
func (s *Server) Options() Options { return s.opts }

// PublishAMI releases a new EKS-optimized image for a family (al2023, al2,
// bottlerocket), architecture (x86_64, arm64) and variant (standard,
// nvidia), and points the SSM alias parameters at it, as an EKS AMI release
// does; nodes on the previous image drift.
func (s *Server) PublishAMI(family, arch, variant string) (ec2.ImageRelease, error) {
	r, err := s.EC2.PublishImage(family, arch, variant)
	if err != nil {
		return r, err
	}
	return r, s.publishAMIParameters(r)
}

// PublishBrokenAMI publishes a release as PublishAMI does whose instances
// never register as Nodes, as when a release's bootstrap is broken: they
// run and never join. It needs Options.RESTConfig.
func (s *Server) PublishBrokenAMI(family, arch, variant string) (ec2.ImageRelease, error) {
	s.mu.Lock()
	k := s.kubelet
	s.mu.Unlock()
	if k == nil {
		return ec2.ImageRelease{}, errors.New("awssim: no kubelet stand-in: start with Options.RESTConfig")
	}
	r, err := s.EC2.PublishImage(family, arch, variant)
	if err != nil {
		return r, err
	}
	// Broken before it is published, so no instance boots from it.
	k.FailImage(r.ImageID)
	return r, s.publishAMIParameters(r)
}

func (s *Server) publishAMIParameters(r ec2.ImageRelease) error {
	paths, err := ssm.AMIParameters(r.Kubernetes, r.Family, r.Architecture, r.Variant, r.Name, r.Version)
	if err != nil {
		return err
	}
	for _, p := range paths {
		s.SSM.Put(p, r.ImageID)
	}
	return nil
}

// eventSink puts EC2 events on the default EventBridge bus.
type eventSink struct{ bus *eventbridge.Service }

func (e eventSink) PutEC2Event(ev ec2.Event) error {
	_, err := e.bus.PutEvent(eventbridge.Event{Source: ev.Source, DetailType: ev.DetailType, Detail: ev.Detail, Resources: ev.Resources, Time: ev.Time})
	return err
}
