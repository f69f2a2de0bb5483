package aws

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go/middleware"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/awserr"
	"github.com/joistdev/terraform-provider-joist/internal/sdkhttp"
)

// Retry tuning: throttled describe storms back off up to 20s over 8
// attempts; no client-side retry quota, so a burst of throttling during a
// scale-up cannot starve later calls of retries.
const (
	retryMaxAttempts = 8
	retryMaxBackoff  = 20 * time.Second
)

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
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = retryMaxAttempts
			o.MaxBackoff = retryMaxBackoff
			o.RateLimiter = ratelimit.None
		})
	}
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
