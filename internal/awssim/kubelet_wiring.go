package awssim

import "context"

// startKubelet is replaced once the kubelet stand-in is wired.
func (s *Server) startKubelet(ctx context.Context) error { return nil }
