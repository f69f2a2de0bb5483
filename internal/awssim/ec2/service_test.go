package ec2_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/loopback"
)

// recorder is an EventSink that keeps what it receives.
type recorder struct {
	mu     sync.Mutex
	events []sim.Event
}

func (r *recorder) PutEC2Event(e sim.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	return nil
}

func (r *recorder) ofType(detailType string) []sim.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sim.Event
	for _, e := range r.events {
		if e.DetailType == detailType {
			out = append(out, e)
		}
	}
	return out
}

// newEC2 serves a fresh simulated EC2 and returns an SDK client for it.
func newEC2(t testing.TB, opts sim.Options) (*sim.Service, *ec2.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	if opts.Events == nil {
		opts.Events = rec
	}
	if opts.PendingDuration == 0 {
		opts.PendingDuration = 20 * time.Millisecond
	}
	if opts.ShuttingDownDuration == 0 {
		opts.ShuttingDownDuration = 20 * time.Millisecond
	}
	opts.ClusterName = "test-cluster"
	svc, err := sim.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	return svc, ec2.NewFromConfig(aws.Config{
		Region:       "us-west-2",
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDEC2TEST", "secret", ""),
		BaseEndpoint: aws.String(srv.URL),
		HTTPClient:   loopback.HTTPClient(),
	}), rec
}

// apiCode returns the AWS error code of err, failing the test if err is not an API error.
func apiCode(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an AWS API error", err, err)
	}
	return ae.ErrorCode()
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func filter(name string, values ...string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: values}
}

var ctx = context.Background()
