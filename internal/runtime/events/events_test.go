package events

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
)

func pod(name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
}

func drain(f *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-f.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func TestRepeatedEventsAreEmittedOncePerDedupeTimeout(t *testing.T) {
	now := time.Unix(0, 0)
	f := events.NewFakeRecorder(100)
	rec := newRecorder(f, func() time.Time { return now }, flowcontrol.NewFakeAlwaysRateLimiter())
	a, b := pod("a"), pod("b")
	for range 3 {
		rec.PodFailedScheduling(a, errors.New("no nodepool"))
	}
	rec.PodFailedScheduling(b, errors.New("no nodepool"))
	rec.PodNominated(a, "nodeclaim", "default-x")
	if got := drain(f); len(got) != 3 {
		t.Fatalf("events %q, want one FailedScheduling per pod and one Nominated", got)
	}
	now = now.Add(DedupeTimeout - time.Second)
	rec.PodFailedScheduling(a, errors.New("no nodepool"))
	if got := drain(f); len(got) != 0 {
		t.Fatalf("repeat within the dedupe timeout was emitted: %q", got)
	}
	rec.PodFailedScheduling(a, errors.New("limits exceeded"))
	now = now.Add(2 * time.Second)
	rec.PodFailedScheduling(a, errors.New("no nodepool"))
	if got := drain(f); len(got) != 2 {
		t.Fatalf("events %q, want the new reason and the repeat after the timeout", got)
	}
}

func TestEventsBeyondTheRateAreDropped(t *testing.T) {
	f := events.NewFakeRecorder(eventBurst * 2)
	rec := newRecorder(f, time.Now, flowcontrol.NewTokenBucketRateLimiterWithClock(eventQPS, eventBurst, fakeClock{}))
	for i := range eventBurst + 50 {
		rec.PodNominated(pod(fmt.Sprint(i)), "node", "n1")
	}
	if got := len(drain(f)); got != eventBurst {
		t.Errorf("%d events emitted in one instant, want the burst of %d", got, eventBurst)
	}
	// A dropped event is not remembered as sent.
	rec2 := newRecorder(f, time.Now, flowcontrol.NewFakeNeverRateLimiter())
	rec2.PodNominated(pod("x"), "node", "n1")
	rec2.limit = flowcontrol.NewFakeAlwaysRateLimiter()
	rec2.PodNominated(pod("x"), "node", "n1")
	if got := drain(f); len(got) != 1 {
		t.Errorf("events %q, want the event once the limiter lets it through", got)
	}
}

// fakeClock never advances, so the token bucket never refills.
type fakeClock struct{}

func (fakeClock) Now() time.Time                  { return time.Unix(0, 0) }
func (fakeClock) Since(t time.Time) time.Duration { return 0 }
func (fakeClock) Sleep(time.Duration)             {}

func TestNominationsHaveTheirOwnRateAndArePerPod(t *testing.T) {
	f := events.NewFakeRecorder(200)
	rec := newRecorder(f, time.Now, flowcontrol.NewFakeAlwaysRateLimiter())
	rec.nominations = flowcontrol.NewTokenBucketRateLimiterWithClock(nominationQPS, nominationBurst, fakeClock{})
	for i := range 50 {
		rec.PodNominated(pod(fmt.Sprint(i)), "nodeclaim", "default-x")
	}
	if got := len(drain(f)); got != nominationBurst {
		t.Errorf("%d Nominated events in one instant, want the nomination burst of %d", got, nominationBurst)
	}
	// Other events do not draw on the nominations' bucket.
	for i := range 20 {
		rec.PodFailedScheduling(pod(fmt.Sprint(i)), errors.New("no nodepool"))
	}
	if got := len(drain(f)); got != 20 {
		t.Errorf("%d FailedScheduling events, want 20", got)
	}
	// A pod told once is not told again within the dedupe timeout, even
	// of another target.
	rec.nominations = flowcontrol.NewFakeAlwaysRateLimiter()
	rec.PodNominated(pod("0"), "nodeclaim", "default-y")
	rec.PodNominated(pod("new"), "nodeclaim", "default-y")
	if got := drain(f); len(got) != 1 || got[0] != "Normal Nominated Pod should schedule on: nodeclaim/default-y" {
		t.Errorf("events %q, want only the new pod's nomination", got)
	}
}
