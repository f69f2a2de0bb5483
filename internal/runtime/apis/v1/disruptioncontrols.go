package v1

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Joist-only disruption controls. They live in Joist's own annotations on a
// NodePool, so a Karpenter manifest (which never carries them) means what it
// means to Karpenter; the controller and the provider's plan both read them
// through ParseDisruptionControls.
const (
	// DisruptionPausedAnnotationKey ("true" or "false") on a NodePool holds
	// its voluntary disruption (emptiness, drift, consolidation) while
	// "true". Forced disruption (expiry, interruption) and node repair go on.
	DisruptionPausedAnnotationKey = "joist.dev/disruption-paused"
	// DriftModeAnnotationKey ("replace", the default, or "observe") on a
	// NodePool: under "observe" its NodeClaims are still marked Drifted but
	// none is replaced until the mode changes.
	DriftModeAnnotationKey = "joist.dev/drift-mode"
	// DriftRolloutAnnotationKey ("canary=<n|n%>,bake=<duration>") on a
	// NodePool rolls drift out as a canary, baked, then waves of the
	// budget's size, each baked; a failed replacement stops it.
	DriftRolloutAnnotationKey = "joist.dev/drift-rollout"
	// DriftRolloutStateAnnotationKey is the controller's own: the rollout's
	// wave, members and bake start, so a restart resumes at the same wave.
	DriftRolloutStateAnnotationKey = "joist.dev/drift-rollout-state"
	// DisruptionBreakerResetAnnotationKey on a NodePool: any new value
	// closes the pool's disruption circuit breaker.
	DisruptionBreakerResetAnnotationKey = "joist.dev/disruption-breaker-reset"
	// DisruptionBreakerAnnotationKey ("<failures>/<window>", e.g. "3/1h")
	// on a NodePool sets when its breaker opens; unset takes the default.
	DisruptionBreakerAnnotationKey = "joist.dev/disruption-breaker"
	// DisruptionBreakerStateAnnotationKey is the controller's own: the
	// pool's breaker record (failures counted, when it opened), kept on the
	// NodePool so a restarted controller resumes with it.
	DisruptionBreakerStateAnnotationKey = "joist.dev/disruption-breaker-state"

	// DisruptionSettingsConfigMap, in the controller's namespace, holds the
	// cluster-wide controls the controller reads on every disruption pass
	// (so they take effect without a restart); joist_controller writes it.
	DisruptionSettingsConfigMap = "joist-disruption"
	// DisruptionSettingsPausedKey ("true" or "false") in that ConfigMap
	// holds voluntary disruption of every NodePool.
	DisruptionSettingsPausedKey = "paused"
	// DisruptionSettingsBreakerKey ("<failures>/<window>") in that
	// ConfigMap sets when the cluster-wide breaker opens.
	DisruptionSettingsBreakerKey = "breaker"
)

// ConditionTypeDisruptionPaused on a NodePool is True while its voluntary
// disruption is held by a pause (its own or the cluster's) or by an
// annotation the controller cannot read; the reason says which. Not part
// of Ready: a paused pool still provisions.
const ConditionTypeDisruptionPaused = "DisruptionPaused"

// Reasons of the DisruptionPaused condition.
const (
	DisruptionPausedReasonNodePool = "NodePoolPaused"
	DisruptionPausedReasonCluster  = "ClusterPaused"
	DisruptionPausedReasonInvalid  = "InvalidDisruptionControls"
	DisruptionPausedReasonNone     = "NotPaused"
)

// ConditionTypeDisruptionHalted on a NodePool is True while a disruption
// circuit breaker (the pool's or the cluster's) holds its voluntary
// disruption after repeated failed replacements. Not part of Ready.
const ConditionTypeDisruptionHalted = "DisruptionHalted"

// Reasons of the DisruptionHalted condition.
const (
	DisruptionHaltedReasonNodePool = "NodePoolBreakerOpen"
	DisruptionHaltedReasonCluster  = "ClusterBreakerOpen"
	DisruptionHaltedReasonNone     = "BreakerClosed"
)

// DriftMode is how a NodePool acts on drift.
type DriftMode string

const (
	DriftModeReplace DriftMode = "replace"
	DriftModeObserve DriftMode = "observe"
)

// DisruptionControls are a NodePool's Joist-only disruption controls.
type DisruptionControls struct {
	Paused       bool
	DriftMode    DriftMode
	BreakerReset string
	// Breaker is nil for the default policy.
	Breaker *BreakerPolicy
	// Rollout is nil when drift replaces nodes as the budgets allow.
	Rollout *DriftRollout
}

// BreakerPolicy opens a disruption circuit breaker when Failures
// replacements fail within Window.
type BreakerPolicy struct {
	Failures int
	Window   time.Duration
}

func (p BreakerPolicy) String() string {
	return fmt.Sprintf("%d/%s", p.Failures, ShortDuration(p.Window))
}

// ShortDuration spells d as people write it ("15m", "1h30m", not
// "15m0s"), so a control read back from its annotation matches the
// configuration that wrote it.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

// ParseBreakerPolicy reads "<failures>/<window>" ("3/1h").
func ParseBreakerPolicy(s string) (BreakerPolicy, error) {
	n, w, ok := strings.Cut(strings.TrimSpace(s), "/")
	failures, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || failures < 1 {
		return BreakerPolicy{}, fmt.Errorf(`is not a breaker policy; write "<failures>/<window>" with at least 1 failure, e.g. "3/1h"`)
	}
	window, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || window < time.Minute {
		return BreakerPolicy{}, fmt.Errorf(`has no valid window; write "<failures>/<window>" with a window of at least 1m, e.g. "3/1h"`)
	}
	return BreakerPolicy{Failures: failures, Window: window}, nil
}

// ControlError is an annotation value the controls cannot take: which
// annotation, the value, and how to write it.
type ControlError struct {
	Key, Value, Fix string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("%s: %q %s", e.Key, e.Value, e.Fix)
}

// ParseDisruptionControls reads a NodePool's controls from its
// annotations; absent annotations take the defaults (not paused, drift
// replaced), which is Karpenter's behaviour. It reports every invalid value.
func ParseDisruptionControls(annotations map[string]string) (DisruptionControls, []*ControlError) {
	c := DisruptionControls{DriftMode: DriftModeReplace, BreakerReset: annotations[DisruptionBreakerResetAnnotationKey]}
	var errs []*ControlError
	if v, ok := annotations[DisruptionPausedAnnotationKey]; ok {
		paused, err := ParsePaused(v)
		if err != nil {
			errs = append(errs, &ControlError{Key: DisruptionPausedAnnotationKey, Value: v, Fix: err.Error()})
		}
		c.Paused = paused
	}
	if v, ok := annotations[DisruptionBreakerAnnotationKey]; ok {
		p, err := ParseBreakerPolicy(v)
		if err != nil {
			errs = append(errs, &ControlError{Key: DisruptionBreakerAnnotationKey, Value: v, Fix: err.Error()})
		} else {
			c.Breaker = &p
		}
	}
	if v, ok := annotations[DriftRolloutAnnotationKey]; ok {
		r, err := ParseDriftRollout(v)
		if err != nil {
			errs = append(errs, &ControlError{Key: DriftRolloutAnnotationKey, Value: v, Fix: err.Error()})
		} else {
			c.Rollout = &r
		}
	}
	if v, ok := annotations[DriftModeAnnotationKey]; ok {
		switch DriftMode(strings.TrimSpace(v)) {
		case DriftModeReplace:
		case DriftModeObserve:
			c.DriftMode = DriftModeObserve
		default:
			errs = append(errs, &ControlError{Key: DriftModeAnnotationKey, Value: v, Fix: `is not a drift mode; write "replace" or "observe"`})
		}
	}
	return c, errs
}

// ParsePaused reads a pause flag: "true" or "false" (empty is false).
func ParsePaused(v string) (bool, error) {
	if strings.TrimSpace(v) == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, fmt.Errorf(`is not a boolean; write "true" or "false"`)
	}
	return b, nil
}

// Annotations renders the controls as the annotations that carry them,
// leaving out the defaults (so a pool that sets none has none).
func (c DisruptionControls) Annotations() map[string]string {
	out := map[string]string{}
	if c.Paused {
		out[DisruptionPausedAnnotationKey] = "true"
	}
	if c.DriftMode != "" && c.DriftMode != DriftModeReplace {
		out[DriftModeAnnotationKey] = string(c.DriftMode)
	}
	if c.Rollout != nil {
		out[DriftRolloutAnnotationKey] = c.Rollout.String()
	}
	if c.Breaker != nil {
		out[DisruptionBreakerAnnotationKey] = c.Breaker.String()
	}
	if c.BreakerReset != "" {
		out[DisruptionBreakerResetAnnotationKey] = c.BreakerReset
	}
	return out
}

// DriftRollout is how a pool's drift proceeds: a canary first (Count nodes, or
// Percent of the pool's nodes), baked, then waves of the budget's size,
// each baked the same way.
type DriftRollout struct {
	Count, Percent int
	Bake           time.Duration
}

// ParseDriftRollout reads "canary=<n|n%>,bake=<duration>" ("canary=1,bake=15m").
func ParseDriftRollout(s string) (DriftRollout, error) {
	var p DriftRollout
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || seen[k] {
			return DriftRollout{}, fmt.Errorf(`is not a rollout; write "canary=<nodes or percent>,bake=<duration>", e.g. "canary=1,bake=15m"`)
		}
		seen[k] = true
		switch k {
		case "canary":
			if n, found := strings.CutSuffix(v, "%"); found {
				pct, err := strconv.Atoi(n)
				if err != nil || pct < 1 || pct > 100 {
					return DriftRollout{}, fmt.Errorf(`has a canary percentage that is not 1%% to 100%%; write e.g. "canary=10%%"`)
				}
				p.Percent = pct
			} else {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return DriftRollout{}, fmt.Errorf(`has a canary that is not a positive node count or a percentage; write e.g. "canary=1" or "canary=10%%"`)
				}
				p.Count = n
			}
		case "bake":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return DriftRollout{}, fmt.Errorf(`has a bake that is not a duration; write e.g. "bake=15m"`)
			}
			p.Bake = d
		default:
			return DriftRollout{}, fmt.Errorf(`has an unknown key %q; write "canary=<nodes or percent>,bake=<duration>"`, k)
		}
	}
	if !seen["canary"] {
		return DriftRollout{}, fmt.Errorf(`has no canary; write e.g. "canary=1,bake=15m"`)
	}
	return p, nil
}

// String is the rollout as ParseDriftRollout reads it.
func (p DriftRollout) String() string {
	return fmt.Sprintf("canary=%s,bake=%s", p.Canary(), ShortDuration(p.Bake))
}

// Canary is the canary as written: a node count ("1") or a share ("10%").
func (p DriftRollout) Canary() string {
	if p.Percent > 0 {
		return strconv.Itoa(p.Percent) + "%"
	}
	return strconv.Itoa(p.Count)
}
