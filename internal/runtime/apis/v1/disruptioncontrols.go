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
}

// BreakerPolicy opens a disruption circuit breaker when Failures
// replacements fail within Window.
type BreakerPolicy struct {
	Failures int
	Window   time.Duration
}

func (p BreakerPolicy) String() string { return fmt.Sprintf("%d/%s", p.Failures, p.Window) }

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
	if c.Breaker != nil {
		out[DisruptionBreakerAnnotationKey] = c.Breaker.String()
	}
	if c.BreakerReset != "" {
		out[DisruptionBreakerResetAnnotationKey] = c.BreakerReset
	}
	return out
}
