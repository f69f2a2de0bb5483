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
	for _, with := range []func() error{
		op.WithProvisioning,
		op.WithTermination,
		op.WithDisruption,
		func() error { return op.WithInterruption(provider) },
	} {
		if err := with(); err != nil {
			return err
		}
	}
	return op.Start(ctx)
}
