package instance

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/aws/smithy-go"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
)

// byIDBatch is how long a describe or terminate by ID waits for others to
// share its call: Karpenter's windows for the same calls.
var byIDBatch = BatchOptions{Idle: 100 * time.Millisecond, Max: time.Second, MaxItems: 500}

type idResult[T any] struct {
	val T
	err error
}

// idBatcher sends the instance IDs asked for in a short window in one call
// and hands each caller the answer for its ID.
type idBatcher[T any] struct {
	opts BatchOptions
	// call answers a set of distinct IDs: every ID it does not answer gets
	// an error.
	call func(ctx context.Context, ids []string) map[string]idResult[T]

	mu  sync.Mutex
	cur *idWindow[T]
}

type idWindow[T any] struct {
	ids     []string
	waiters map[string][]chan idResult[T]
	idle    *time.Timer
	max     *time.Timer
}

func newIDBatcher[T any](opts BatchOptions, call func(context.Context, []string) map[string]idResult[T]) *idBatcher[T] {
	return &idBatcher[T]{opts: opts.withDefaults(), call: call}
}

// do waits for the window id joins and returns its answer.
func (b *idBatcher[T]) do(ctx context.Context, id string) (T, error) {
	ch := make(chan idResult[T], 1)
	b.mu.Lock()
	w := b.cur
	if w == nil {
		w = &idWindow[T]{waiters: map[string][]chan idResult[T]{}}
		b.cur = w
		w.idle = time.AfterFunc(b.opts.Idle, func() { b.flush(w) })
		w.max = time.AfterFunc(b.opts.Max, func() { b.flush(w) })
	} else {
		w.idle.Reset(b.opts.Idle)
	}
	if _, ok := w.waiters[id]; !ok {
		w.ids = append(w.ids, id)
	}
	w.waiters[id] = append(w.waiters[id], ch)
	full := len(w.ids) >= b.opts.MaxItems
	b.mu.Unlock()
	if full {
		go b.flush(w)
	}
	select {
	case r := <-ch:
		return r.val, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// flush sends a window once (whichever trigger fires first).
func (b *idBatcher[T]) flush(w *idWindow[T]) {
	b.mu.Lock()
	if b.cur != w {
		b.mu.Unlock()
		return
	}
	b.cur = nil
	w.idle.Stop()
	w.max.Stop()
	b.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	results := b.call(ctx, w.ids)
	for id, chs := range w.waiters {
		r, ok := results[id]
		if !ok {
			r = idResult[T]{err: fmt.Errorf("EC2 gave no answer for instance %s", id)}
		}
		for _, ch := range chs {
			ch <- r
		}
	}
}

// instanceIDs matches the instance IDs an EC2 error message names.
var instanceIDs = regexp.MustCompile(`i-[0-9A-Za-z]+`)

// splitCall runs one EC2 call over many IDs where an absent or malformed ID
// fails the whole call (EC2 names the IDs: "The instance IDs 'i-1, i-2' do
// not exist"): the named IDs get that error and the call is repeated
// without them. A transient error is every ID's answer; another error that
// names no ID of the call is answered ID by ID, so one instance's problem
// (termination protection, say) does not fail the others.
func splitCall[T any](ctx context.Context, ids []string, call func(context.Context, []string) (map[string]idResult[T], error)) map[string]idResult[T] {
	out := make(map[string]idResult[T], len(ids))
	remaining := ids
	for len(remaining) > 0 {
		got, err := call(ctx, remaining)
		if err == nil {
			for id, r := range got {
				out[id] = r
			}
			return out
		}
		if awserr.IsTransient(err) {
			for _, id := range remaining {
				out[id] = idResult[T]{err: err}
			}
			return out
		}
		named := map[string]bool{}
		if awserr.IsCode(err, "InvalidInstanceID.NotFound", "InvalidInstanceID.Malformed") {
			var apiErr smithy.APIError
			if errors.As(err, &apiErr) {
				for _, id := range instanceIDs.FindAllString(apiErr.ErrorMessage(), -1) {
					named[id] = true
				}
			}
		}
		var rest []string
		for _, id := range remaining {
			if named[id] {
				out[id] = idResult[T]{err: err}
			} else {
				rest = append(rest, id)
			}
		}
		if len(rest) == len(remaining) {
			// The error names none of them: ask for each alone.
			if len(remaining) == 1 {
				out[remaining[0]] = idResult[T]{err: err}
				return out
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, id := range remaining {
				wg.Go(func() {
					one := splitCall(ctx, []string{id}, call)
					mu.Lock()
					defer mu.Unlock()
					for k, v := range one {
						out[k] = v
					}
				})
			}
			wg.Wait()
			return out
		}
		remaining = rest
	}
	return out
}
