package ratelimit

import "testing"

func TestScaledConcurrency(t *testing.T) {
	for _, tc := range []struct {
		millis int64
		base   int
		want   int
	}{
		{250, 10, 10},
		{1000, 10, 10},
		{1001, 10, 26}, // two cores
		{4000, 50, 301},
		{60000, 10, 1000},
		{240000, 10, 1000},
	} {
		if got := ScaledConcurrency(tc.millis, tc.base); got != tc.want {
			t.Errorf("ScaledConcurrency(%d, %d) = %d, want %d", tc.millis, tc.base, got, tc.want)
		}
	}
}
