package instancetype_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/cache"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
)

// Many callers finding the catalog stale at once share one refresh: the
// catalog is described once per refresh period, not once per caller.
func TestConcurrentListsShareOneRefresh(t *testing.T) {
	sim, client, prices := simulated(t)
	ctx := context.Background()
	p := instancetype.New(client, prices, cache.NewUnavailableOfferings(), instancetype.Options{Region: sim.Config.Region, Refresh: time.Hour})
	nc := nodeClass("herd", "amd64")
	zones := []string{sim.EC2.Region().Zones[0].Name}

	// One refresh on its own, to count its pages.
	before := sim.Requests().Count("ec2", "DescribeInstanceTypes")
	if err := p.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	pages := sim.Requests().Count("ec2", "DescribeInstanceTypes") - before
	if pages == 0 {
		t.Fatal("a refresh described no instance types")
	}

	// A fresh provider, stale from the start, hit by 20 callers at once.
	p = instancetype.New(client, prices, cache.NewUnavailableOfferings(), instancetype.Options{Region: sim.Config.Region, Refresh: time.Hour})
	before = sim.Requests().Count("ec2", "DescribeInstanceTypes")
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			its, err := p.List(ctx, nc, zones)
			if err == nil && len(its) == 0 {
				t.Error("List returned no instance types")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := sim.Requests().Count("ec2", "DescribeInstanceTypes") - before; got != pages {
		t.Errorf("20 concurrent Lists made %d DescribeInstanceTypes calls, want one refresh's %d", got, pages)
	}
}
