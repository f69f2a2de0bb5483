package instance

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/structhash"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ownership"
)

// NodeClaimTag names the claim an instance was launched for. Batched
// launches share one fleet request, so this tag is added per instance after
// the fleet returns.
const NodeClaimTag = ownership.NodeClaimTag

// NameTag is the instance's name in the EC2 console; once the node
// registers it is the node's name.
const NameTag = "Name"

// BatchOptions bound how long a launch waits for identical launches to
// share its fleet. Zero values take the defaults.
type BatchOptions struct {
	Idle     time.Duration // flush after no new launch for this long; default 35ms
	Max      time.Duration // flush at the latest this long after the first; default 250ms
	MaxItems int           // flush when this many launches wait; default 500
}

func (o BatchOptions) withDefaults() BatchOptions {
	if o.Idle == 0 {
		o.Idle = 35 * time.Millisecond
	}
	if o.Max == 0 {
		o.Max = 250 * time.Millisecond
	}
	if o.MaxItems == 0 {
		o.MaxItems = 500
	}
	return o
}

type result struct {
	inst *Instance
	err  error
}

type waiter struct {
	claim string
	done  chan result
}

type batch struct {
	req     Request // tags without the claim tag
	waiters []waiter
	idle    *time.Timer
	max     *time.Timer
}

// batcher groups launches whose requests differ only in the claim tag.
type batcher struct {
	p    *Provider
	opts BatchOptions

	mu      sync.Mutex
	pending map[string]*batch
}

func newBatcher(p *Provider, opts BatchOptions) *batcher {
	return &batcher{p: p, opts: opts.withDefaults(), pending: map[string]*batch{}}
}

// Launch creates one instance for the request, sharing a fleet with
// identical concurrent requests. The instance carries the request's tags.
func (p *Provider) Launch(ctx context.Context, req Request) (*Instance, error) {
	done := p.batcher.add(req)
	select {
	case r := <-done:
		return r.inst, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (b *batcher) add(req Request) chan result {
	shared := req
	shared.Tags = maps.Clone(req.Tags)
	claim := shared.Tags[NodeClaimTag]
	delete(shared.Tags, NodeClaimTag)
	key := structhash.Hash(shared)
	w := waiter{claim: claim, done: make(chan result, 1)}

	b.mu.Lock()
	defer b.mu.Unlock()
	bt, ok := b.pending[key]
	if !ok {
		bt = &batch{req: shared}
		b.pending[key] = bt
		bt.idle = time.AfterFunc(b.opts.Idle, func() { b.flush(key, bt) })
		bt.max = time.AfterFunc(b.opts.Max, func() { b.flush(key, bt) })
	} else {
		bt.idle.Reset(b.opts.Idle)
	}
	bt.waiters = append(bt.waiters, w)
	if len(bt.waiters) >= b.opts.MaxItems {
		go b.flush(key, bt)
	}
	return w.done
}

// flush launches a batch once (whichever trigger fires first).
func (b *batcher) flush(key string, bt *batch) {
	b.mu.Lock()
	if b.pending[key] != bt {
		b.mu.Unlock()
		return
	}
	delete(b.pending, key)
	bt.idle.Stop()
	bt.max.Stop()
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if len(bt.waiters) == 1 {
		// One launch: tag at creation, no follow-up call.
		req := bt.req
		req.Tags = maps.Clone(bt.req.Tags)
		if bt.waiters[0].claim != "" {
			req.Tags[NodeClaimTag] = bt.waiters[0].claim
		}
		insts, err := b.p.fleet(ctx, req, 1)
		if err != nil {
			bt.waiters[0].done <- result{err: err}
			return
		}
		bt.waiters[0].done <- result{inst: insts[0]}
		return
	}
	insts, err := b.p.fleet(ctx, bt.req, len(bt.waiters))
	// Each launch gets its instance as soon as its own claim tag is on it:
	// tagged one after another, the last claim of a batch of fifty waited
	// for fifty calls, holding a launch worker all the while.
	sem := make(chan struct{}, tagWorkers)
	var wg sync.WaitGroup
	for i, w := range bt.waiters {
		if i >= len(insts) {
			if err == nil {
				err = &cloud.InsufficientCapacityError{Err: fmt.Errorf("the fleet launched %d of %d instances", len(insts), len(bt.waiters))}
			}
			w.done <- result{err: err}
			continue
		}
		inst := insts[i]
		inst.Tags = maps.Clone(bt.req.Tags)
		if w.claim == "" {
			w.done <- result{inst: inst}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if tagErr := b.p.Tag(ctx, inst.ID, map[string]string{NodeClaimTag: w.claim}); tagErr != nil {
				// The instance is untracked without its claim tag; give it
				// up (garbage collection terminates it) and fail the launch.
				_ = b.p.Terminate(ctx, inst.ID)
				w.done <- result{err: &cloud.CreateError{Reason: "TaggingFailed", Err: tagErr}}
				return
			}
			inst.Tags[NodeClaimTag] = w.claim
			w.done <- result{inst: inst}
		}()
	}
	wg.Wait()
}

// tagWorkers bounds the claim-tag calls one batch makes at once, well
// within EC2's burst for mutating calls.
const tagWorkers = 10
