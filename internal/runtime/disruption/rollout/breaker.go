package rollout

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Policy trips a breaker when Failures replacements fail within Window.
type Policy = v1.BreakerPolicy

// Defaults: a pool halts after 3 failed replacements within an hour, the
// cluster after 10 across its pools.
var (
	PoolDefault    = Policy{Failures: 3, Window: time.Hour}
	ClusterDefault = Policy{Failures: 10, Window: time.Hour}
)

// Record is a pool's breaker: the failed replacements it counted, for which
// spec (the pool's and its node class's hashes) and reset token, and when
// it opened. It stays open until the spec or the token changes.
type Record struct {
	Spec     string      `json:"spec"`
	Reset    string      `json:"reset,omitempty"`
	Failures []time.Time `json:"failures,omitempty"`
	Opened   *time.Time  `json:"opened,omitempty"`
}

// SpecIdentity is what a pool's breaker and drift rollout are counted
// against: the pool's hash, its node class's hash annotations (in key
// order) and the release the class resolves (its AMIs; "" for a kind
// without releases). The class hash leaves the AMI selector out, so a new
// release must count on its own. A change of any is a new spec, which
// closes the breaker (see For) and starts a new rollout.
func SpecIdentity(poolHash string, classHashes map[string]string, release string) string {
	id := poolHash
	for _, k := range slices.Sorted(maps.Keys(classHashes)) {
		id += "/" + classHashes[k]
	}
	if release != "" {
		id += "/" + release
	}
	return id
}

// Parse reads a persisted record; an unreadable one is empty (the breaker
// starts closed rather than wedging the pool on a bad annotation).
func Parse(s string) Record {
	var r Record
	if s == "" || json.Unmarshal([]byte(s), &r) != nil {
		return Record{}
	}
	return r
}

// Encode is the record as persisted.
func (r Record) Encode() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// For is the record as it applies to the pool now: a changed spec or reset
// token closes the breaker and forgets the failures.
func (r Record) For(spec, reset string) Record {
	if r.Spec != spec || r.Reset != reset {
		return Record{Spec: spec, Reset: reset}
	}
	return r
}

// Open reports whether the breaker is open.
func (r Record) Open() bool { return r.Opened != nil }

// Fail counts a failed replacement at at: failures older than the window
// are forgotten, and the breaker opens once the window holds p.Failures.
func (r Record) Fail(at time.Time, p Policy) Record {
	out := Record{Spec: r.Spec, Reset: r.Reset, Opened: r.Opened}
	for _, f := range r.Failures {
		if at.Sub(f) < p.Window {
			out.Failures = append(out.Failures, f)
		}
	}
	out.Failures = append(out.Failures, at.UTC())
	sort.Slice(out.Failures, func(i, j int) bool { return out.Failures[i].Before(out.Failures[j]) })
	if out.Opened == nil && InWindow(out.Failures, at, p.Window) >= p.Failures {
		opened := at.UTC()
		out.Opened = &opened
	}
	return out
}

// InWindow counts the failures in (now-window, now].
func InWindow(failures []time.Time, now time.Time, window time.Duration) int {
	n := 0
	for _, f := range failures {
		if !f.After(now) && now.Sub(f) < window {
			n++
		}
	}
	return n
}

// ClusterOpen reports whether the pools' failures together trip the
// cluster-wide breaker at now: p.Failures of them within p.Window.
func ClusterOpen(records []Record, now time.Time, p Policy) (bool, int) {
	n := 0
	for _, r := range records {
		n += InWindow(r.Failures, now, p.Window)
	}
	return n >= p.Failures, n
}
