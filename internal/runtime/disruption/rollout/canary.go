package rollout

import (
	"encoding/json"
	"math"
	"time"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Plan is how a pool's drift proceeds (see v1.DriftRollout).
type Plan = v1.DriftRollout

// CanarySize is the canary's node count in a pool of total nodes: at
// least one.
func CanarySize(p Plan, total int) int {
	if p.Percent > 0 {
		return max(1, int(math.Ceil(float64(total)*float64(p.Percent)/100)))
	}
	return max(1, p.Count)
}

// State is a pool's drift rollout, persisted on the NodePool so a
// restarted controller resumes at the same wave: which spec it rolls out,
// the wave (0 is the canary), the wave's size (fixed when it began), the
// NodeClaims it has replaced so far, when its replacements were all ready,
// and why the rollout stopped, if it did.
type State struct {
	Spec      string     `json:"spec"`
	Wave      int        `json:"wave"`
	Size      int        `json:"size,omitempty"`
	Members   []string   `json:"members,omitempty"`
	BakeStart *time.Time `json:"bakeStart,omitempty"`
	Failed    string     `json:"failed,omitempty"`
}

// ParseState reads a persisted state; an unreadable one is none.
func ParseState(s string) State {
	var st State
	if s == "" || json.Unmarshal([]byte(s), &st) != nil {
		return State{}
	}
	return st
}

// Encode is the state as persisted.
func (s State) Encode() string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Step advances the rollout of spec and says how many more drifted nodes
// may start now (the caller also holds to the budget). total is the pool's
// node count, budget its drift budget now, ready how many of the wave's
// replaced NodeClaims have replacements that are ready (registered,
// initialized, Ready, pods Ready).
//
// A wave starts its members, waits for all their replacements to be
// ready, bakes for the plan's bake time from then, and the next wave
// begins; a failure stops the rollout until the spec changes.
func Step(s State, p Plan, spec string, total, budget, ready int, now time.Time) (State, int) {
	if s.Spec != spec {
		s = State{Spec: spec}
	}
	if s.Failed != "" {
		return s, 0
	}
	for {
		if s.Size == 0 {
			s.Size = budget
			if s.Wave == 0 {
				s.Size = CanarySize(p, total)
			}
			if s.Size == 0 {
				return s, 0
			}
		}
		if len(s.Members) < s.Size {
			return s, s.Size - len(s.Members)
		}
		if ready < len(s.Members) {
			return s, 0
		}
		if s.BakeStart == nil {
			at := now.UTC()
			s.BakeStart = &at
		}
		if now.Sub(*s.BakeStart) < p.Bake {
			return s, 0
		}
		s = State{Spec: s.Spec, Wave: s.Wave + 1}
		ready = 0
	}
}

// Start records that the wave replaces claim.
func (s State) Start(claim string) State {
	s.Members = append(append([]string(nil), s.Members...), claim)
	return s
}

// Fail stops the rollout.
func (s State) Fail(why string) State {
	if s.Failed == "" {
		s.Failed = why
	}
	return s
}
