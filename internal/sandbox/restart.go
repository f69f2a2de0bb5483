package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// stopGrace is how long etcd and kube-apiserver get to stop after SIGTERM
// before envtest kills them.
const stopGrace = 10 * time.Second

// RestartAPIServer stops kube-apiserver as a rolling restart does (SIGTERM),
// keeps it down for down, and starts it again with the same flags, port,
// certificates and etcd; it returns once it answers /healthz again. Every
// client (the components, the controller, awssim's kubelet stand-in,
// tests) sees connection errors meanwhile and has to reconnect by itself.
func (s *Sandbox) RestartAPIServer(ctx context.Context, down time.Duration) error {
	return s.restart(ctx, "kube-apiserver", s.env.ControlPlane.APIServer, down)
}

// RestartEtcd stops etcd (SIGTERM), keeps it down for down, and starts it
// again on the same data directory and client URL. kube-apiserver stays up:
// its requests fail until etcd is back, and it reconnects by itself.
func (s *Sandbox) RestartEtcd(ctx context.Context, down time.Duration) error {
	return s.restart(ctx, "etcd", s.env.ControlPlane.Etcd, down)
}

// restartable is one of envtest's processes.
type restartable interface {
	Start() error
	Stop() error
}

// restart stops and starts one of envtest's processes; their state lives
// in the sandbox's directories (startAPIServer), so it survives.
func (s *Sandbox) restart(ctx context.Context, name string, p restartable, down time.Duration) error {
	s.step("stopping %s for %s", name, down)
	if err := p.Stop(); err != nil {
		// With clients' watches open, kube-apiserver's graceful stop can hang
		// after it stopped listening; envtest then kills it (SIGKILL), which
		// is a restart all the same.
		if !strings.Contains(err.Error(), "timeout waiting for process") {
			return fmt.Errorf("sandbox: stopping %s: %w", name, err)
		}
		s.step("%s did not stop within %s of SIGTERM: killed", name, stopGrace)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	if err := p.Start(); err != nil {
		return fmt.Errorf("sandbox: starting %s again: %w", name, err)
	}
	s.step("%s serves again", name)
	return nil
}
