package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator"
)

// runController starts the reconciling runtime with settings from args and
// the environment, until SIGINT or SIGTERM.
func runController(ctx context.Context, args []string) error {
	settings, err := operator.ParseSettings(args, os.Getenv)
	if err != nil {
		return err
	}
	operator.SetBuildInfo(version)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	op, err := operator.New(ctx, settings)
	if err != nil {
		return err
	}
	provider, err := op.WithAWS()
	if err != nil {
		return err
	}
	if err := op.Register(provider); err != nil {
		return err
	}
	return op.Start(ctx)
}
