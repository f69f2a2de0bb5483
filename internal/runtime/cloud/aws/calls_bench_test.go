package aws_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// BenchmarkAWSCallsPerNode launches 60 claims at once (15 each of four
// types, as a provisioning pass does), then deletes them all at once and
// keeps deleting each until its instance is gone, as termination does. It
// reports the cloud provider's AWS calls per node by operation, counted in
// awssim's request log:
//
//	go test -run '^$' -bench AWSCallsPerNode -benchtime 1x ./internal/runtime/cloud/aws/
func BenchmarkAWSCallsPerNode(b *testing.B) {
	const perType = 15
	types := []string{"m5.large", "c5.large", "r5.large", "m5.xlarge"}
	n := perType * len(types)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	nc := readyNodeClass(b, prov, testenv.NodeClass("calls", cluster, "al2023@latest"))
	for round := range b.N {
		sim.Requests().Reset()
		claims := make([]*v1.NodeClaim, n)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for i := range n {
			wg.Go(func() {
				c := testenv.NodeClaim(fmt.Sprintf("calls-%d-%d", round, i), "calls", nc.Name,
					testenv.In(corev1.LabelInstanceTypeStable, types[i%len(types)]),
					testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
				got, err := prov.Create(ctx, c)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				claims[i] = got
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			b.Fatalf("%d of %d launches failed, first: %v", len(errs), n, errs[0])
		}
		launch := countCalls()
		sim.Requests().Reset()
		for _, c := range claims {
			wg.Go(func() {
				for {
					err := prov.Delete(ctx, c)
					if cloud.IsNodeClaimNotFound(err) {
						return
					}
					if ctx.Err() != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("deleting %s: %v", c.Name, err))
						mu.Unlock()
						return
					}
					time.Sleep(time.Second)
				}
			})
		}
		wg.Wait()
		if len(errs) > 0 {
			b.Fatalf("%d of %d deletions failed, first: %v", len(errs), n, errs[0])
		}
		del := countCalls()
		b.Logf("launching %d nodes: %s", n, perNode(launch, n))
		b.Logf("deleting %d nodes: %s", n, perNode(del, n))
		b.ReportMetric(float64(total(launch))/float64(n), "launch-calls/node")
		b.ReportMetric(float64(total(del))/float64(n), "delete-calls/node")
	}
}

func countCalls() map[string]int {
	out := map[string]int{}
	for _, r := range sim.Requests().Requests("", "") {
		out[r.Operation]++
	}
	return out
}

func total(calls map[string]int) int {
	s := 0
	for _, c := range calls {
		s += c
	}
	return s
}

func perNode(calls map[string]int, n int) string {
	ops := slices.SortedFunc(maps.Keys(calls), func(a, b string) int { return calls[b] - calls[a] })
	parts := []string{fmt.Sprintf("%d calls, %.2f per node", total(calls), float64(total(calls))/float64(n))}
	for _, op := range ops {
		parts = append(parts, fmt.Sprintf("%s %d", op, calls[op]))
	}
	return strings.Join(parts, ", ")
}
