// Package scale runs Joist at cluster scale in the sandbox: the real
// controller binary, deployed as joist_controller deploys it and run by the
// sandbox as its pod, against kube-scheduler, kube-controller-manager, kwok
// and awssim. Each scenario prints a table row (wall time, controller RSS and
// CPU, AWS calls, cost and its ratio to the LP lower bound).
//
// JOIST_SCALE selects the size: "smoke" (default, part of `make test`) runs a
// small scale-out and scale-in; "full" (`make scale`) runs Karpenter's
// performance-suite scenarios and writes docs/performance.md; "scale-out"
// runs the 1,000-pod scale-out alone, "drift" the drift row with the
// scale-out and scale-in it starts from, "anti" the 2,000-pod hostname
// anti-affinity one, "spread" the 10,000-pod one and "50k" the 50,000-pod
// one (JOIST_SCALE_PODS sets its pod count for a smaller machine). Only
// "full" writes docs/performance.md; the others print their rows, so a
// partial run never drops rows the full run measured.
// JOIST_SCALE_DIR keeps the sandbox's state and component logs (the
// controller's included) in that directory after the run, and the
// controller's heap profile at the end of each provisioning scenario
// (heap-<pool>.pb.gz).
package scale
