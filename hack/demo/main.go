// Command demo is `make demo` and `make demo-down`; see internal/demo.
//
//	go run ./hack/demo [--short]   # sandbox, terraform apply, the autoscaler at work
//	go run ./hack/demo down        # terraform destroy, check awssim, stop the sandbox
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/joistdev/terraform-provider-joist/internal/demo"
)

func main() {
	short := flag.Bool("short", false, "fewer pods and shorter waits")
	dir := flag.String("dir", ".sandbox", "the sandbox's state directory")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := demo.Options{Dir: *dir, Short: *short, Out: os.Stdout}
	var err error
	switch flag.Arg(0) {
	case "", "up":
		_, err = demo.Run(ctx, opts)
	case "down":
		err = demo.Down(ctx, opts)
	default:
		err = fmt.Errorf("unknown command %q: want up or down", flag.Arg(0))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
