package operator

import (
	"net/http"
	"net/http/pprof"
)

// profilingHandlers are Go's pprof endpoints, served on the metrics port
// when ENABLE_PROFILING is set, as Karpenter does. The index also serves
// the named profiles (/debug/pprof/heap, goroutine, allocs, ...).
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
