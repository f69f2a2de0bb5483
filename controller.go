package main

import (
	"context"
	"errors"
)

// runController starts the reconciling runtime.
func runController(_ context.Context, _ []string) error {
	return errors.New("controller: the runtime is not part of this build yet")
}
