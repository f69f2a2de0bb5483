package aws

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/sdkhttp"
)

// Retry tuning: a throttled call is tried up to 8 times, backing off up to
// 20s, so a describe storm during a scale-up rides out AWS's throttling.
// Retries draw on the SDK's standard quota (each client's token bucket of
// 500: a retry costs 5, one after a timeout 10, a success puts 1 back):
// while a service keeps failing, the bucket empties and calls fail after
// their first attempt instead of multiplying the load eightfold.
const (
	retryMaxAttempts = 8
	retryMaxBackoff  = 20 * time.Second
)

// newRetryer is the retryer every client of the provider uses: the SDK's
// standard retryer, its retry quota included.
func newRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = retryMaxAttempts
		o.MaxBackoff = retryMaxBackoff
	})
}

var (
	apiCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "cloudprovider", Name: "aws_api_calls_total",
		Help: "AWS API calls made by the cloud provider, by service and operation.",
	}, []string{"service", "operation"})
	apiErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "joist", Subsystem: "cloudprovider", Name: "aws_api_errors_total",
		Help: "Failed AWS API calls (after retries), by service, operation and error code.",
	}, []string{"service", "operation", "code"})
	apiDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "joist", Subsystem: "cloudprovider", Name: "aws_api_duration_seconds",
		Help:    "Duration of AWS API calls including retries, by service and operation.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	}, []string{"service", "operation"})
)

func init() {
	for _, c := range []prometheus.Collector{apiCalls, apiErrors, apiDuration} {
		if err := crmetrics.Registry.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if !errors.As(err, &already) {
				panic(err)
			}
		}
	}
}

// tune returns a copy of cfg with the retryer and metrics middleware the
// provider uses.
func tune(cfg aws.Config) aws.Config {
	cfg = cfg.Copy()
	cfg.HTTPClient = sdkhttp.Client()
	cfg.Retryer = newRetryer
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("JoistMetrics", measure), middleware.Before)
	})
	return cfg
}

func measure(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
	start := time.Now()
	out, md, err := next.HandleInitialize(ctx, in)
	apiCalls.WithLabelValues(service, op).Inc()
	apiDuration.WithLabelValues(service, op).Observe(time.Since(start).Seconds())
	if err != nil {
		code := awserr.Code(err)
		if code == "" {
			code = "client"
		}
		apiErrors.WithLabelValues(service, op, code).Inc()
	}
	return out, md, err
}
