package v1

import (
	"reflect"
	"testing"
	"time"
)

func TestParseDisruptionControls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ann     map[string]string
		want    DisruptionControls
		errKeys []string
	}{
		{"none is Karpenter's behaviour", nil, DisruptionControls{DriftMode: DriftModeReplace}, nil},
		{"paused", map[string]string{DisruptionPausedAnnotationKey: "true"}, DisruptionControls{Paused: true, DriftMode: DriftModeReplace}, nil},
		{"not paused", map[string]string{DisruptionPausedAnnotationKey: "false"}, DisruptionControls{DriftMode: DriftModeReplace}, nil},
		{"observe", map[string]string{DriftModeAnnotationKey: "observe"}, DisruptionControls{DriftMode: DriftModeObserve}, nil},
		{"replace", map[string]string{DriftModeAnnotationKey: "replace"}, DisruptionControls{DriftMode: DriftModeReplace}, nil},
		{"reset token", map[string]string{DisruptionBreakerResetAnnotationKey: "2026-11-28"}, DisruptionControls{DriftMode: DriftModeReplace, BreakerReset: "2026-11-28"}, nil},
		{"breaker", map[string]string{DisruptionBreakerAnnotationKey: "5/30m"}, DisruptionControls{DriftMode: DriftModeReplace, Breaker: &BreakerPolicy{5, 30 * time.Minute}}, nil},
		{"both invalid", map[string]string{DisruptionPausedAnnotationKey: "yes please", DriftModeAnnotationKey: "watch"},
			DisruptionControls{DriftMode: DriftModeReplace}, []string{DisruptionPausedAnnotationKey, DriftModeAnnotationKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := ParseDisruptionControls(tc.ann)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("controls %+v, want %+v", got, tc.want)
			}
			var keys []string
			for _, e := range errs {
				keys = append(keys, e.Key)
				if e.Fix == "" {
					t.Errorf("%s: the error says no fix", e.Key)
				}
			}
			if !reflect.DeepEqual(keys, tc.errKeys) {
				t.Errorf("errors for %v, want %v", keys, tc.errKeys)
			}
			if len(errs) == 0 {
				if back, _ := ParseDisruptionControls(got.Annotations()); !reflect.DeepEqual(back, got) {
					t.Errorf("rendered %v reads back as %+v", got.Annotations(), back)
				}
			}
		})
	}
}

func TestParseBreakerPolicy(t *testing.T) {
	if p, err := ParseBreakerPolicy("5/30m"); err != nil || p != (BreakerPolicy{5, 30 * time.Minute}) {
		t.Errorf("5/30m: %v %v", p, err)
	}
	for _, bad := range []string{"", "5", "0/1h", "x/1h", "3/10s", "3/soon"} {
		if _, err := ParseBreakerPolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 90 * time.Second: "1m30s", 15 * time.Minute: "15m", time.Hour: "1h",
		90 * time.Minute: "1h30m", time.Hour + time.Second: "1h0m1s", 1500 * time.Millisecond: "1.5s",
	} {
		if got := ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%s) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(ShortDuration(d)); err != nil || back != d {
			t.Errorf("%q reads back as %s, %v", ShortDuration(d), back, err)
		}
	}
	if got := (BreakerPolicy{3, time.Hour}).String(); got != "3/1h" {
		t.Errorf("breaker renders as %q, want 3/1h", got)
	}
	if got := (DriftRollout{Percent: 10, Bake: 15 * time.Minute}).String(); got != "canary=10%,bake=15m" {
		t.Errorf("rollout renders as %q", got)
	}
}

func TestParseDriftRollout(t *testing.T) {
	for in, want := range map[string]DriftRollout{
		"canary=1,bake=15m": {Count: 1, Bake: 15 * time.Minute},
		"canary=10%":        {Percent: 10},
		"bake=1h,canary=2":  {Count: 2, Bake: time.Hour},
	} {
		got, err := ParseDriftRollout(in)
		if err != nil || got != want {
			t.Errorf("ParseDriftRollout(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, err := ParseDriftRollout(got.String()); err != nil || back != got {
			t.Errorf("%q does not read back: %+v %v", got.String(), back, err)
		}
	}
	for _, bad := range []string{"", "bake=15m", "canary=0", "canary=101%", "canary=x", "canary=1,bake=soon", "canary=1,waves=2", "canary=1,canary=2"} {
		if _, err := ParseDriftRollout(bad); err == nil {
			t.Errorf("ParseDriftRollout(%q) accepted", bad)
		}
	}
}
