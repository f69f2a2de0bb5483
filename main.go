// Command terraform-provider-joist is one binary with three modes: with no
// arguments Terraform starts it as the provider; `controller` runs the
// autoscaling runtime (the container image's entrypoint); `sandbox` runs a
// local EKS-like world for the demo and tests.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/joistdev/terraform-provider-joist/internal/provider"
	"github.com/joistdev/terraform-provider-joist/internal/sandbox"
)

// version is set by the release build (goreleaser ldflags).
var version = "dev"

func main() {
	ctx := context.Background()
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "controller":
			exit(runController(ctx, os.Args[2:]))
		case "sandbox":
			exit(sandbox.Command(ctx, os.Args[2:], os.Stdout, os.Stderr))
		case "version", "--version":
			fmt.Println(version)
			return
		}
	}
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider in debug mode for debuggers such as delve")
	flag.Parse()
	err := providerserver.Serve(ctx, provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/joistdev/joist",
		Debug:   debug,
	})
	exit(err)
}

// exit ends the process: a mode that returned must never fall through to
// serving the provider.
func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
