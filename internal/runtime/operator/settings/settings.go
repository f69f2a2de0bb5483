package settings

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LeaderLeaseDuration is how long the controller's leader-election Lease
// stays valid without a renewal (controller-runtime's default, as in
// Karpenter): a standby takes over within it, so a Lease without a live
// holder for longer means no controller is running.
const LeaderLeaseDuration = 15 * time.Second

// DefaultLeaderElectionName is the leader-election Lease's name unless
// LEADER_ELECTION_NAME says otherwise (Karpenter's default).
const DefaultLeaderElectionName = "karpenter-leader-election"

// Settings are the controller's configuration, read from flags and the
// environment with Karpenter's names and defaults. A flag wins over its
// environment variable.
type Settings struct {
	ClusterName             string
	ClusterEndpoint         string
	ClusterCABundle         string
	InterruptionQueue       string
	BatchIdleDuration       time.Duration
	BatchMaxDuration        time.Duration
	VMMemoryOverheadPercent float64
	ReservedENIs            int
	FeatureGates            FeatureGates
	// AWSFeatureGates are the AWS provider's gates (AWS_FEATURE_GATES).
	AWSFeatureGates FeatureGates
	// IsolatedVPC: no calls to AWS services without VPC endpoints (the
	// Pricing API, IAM cleanups); on-demand prices come from the embedded
	// table.
	IsolatedVPC bool
	// DisableDryRun skips the EC2NodeClass permission dry-runs.
	DisableDryRun bool
	// EKSControlPlane reads the Kubernetes version (for AMI aliases) from
	// eks:DescribeCluster instead of the API server, as Karpenter does.
	// Missing cluster details are discovered with eks:DescribeCluster
	// either way.
	EKSControlPlane bool
	// Refresh intervals of AMIs, subnets and security groups (>= 1m).
	AMIRefreshInterval           time.Duration
	SubnetRefreshInterval        time.Duration
	SecurityGroupRefreshInterval time.Duration
	PreferencePolicy             string
	MinValuesPolicy              string
	// NodeCost is what scheduling adds to each new node's price ($/h)
	// when it compares instance types (NODE_COST).
	NodeCost                float64
	LogLevel                string
	MetricsPort             int
	HealthProbePort         int
	DisableLeaderElection   bool
	LeaderElectionName      string
	LeaderElectionNamespace string
	KubeClientQPS           int
	KubeClientBurst         int
	CPURequests             int
	Kubeconfig              string
	// EnableProfiling serves Go's pprof handlers on the metrics port.
	EnableProfiling bool
	// MemoryLimit is the container's memory limit in bytes (-1: none); the
	// Go runtime's soft limit is set to 90% of it, so the heap collects
	// harder before the kernel kills the process.
	MemoryLimit int64
	// KubeDNSIP is kube-system/kube-dns's cluster IP, discovered at start
	// (nodes' default cluster DNS and the cluster's IP family); it has no
	// flag.
	KubeDNSIP string
}

// setting is one flag with its environment variable.
type setting struct {
	flag, env, def, usage string
}

var settings = []setting{
	{"cluster-name", "CLUSTER_NAME", "", "name of the EKS cluster (required); used for discovery and tagging"},
	{"cluster-endpoint", "CLUSTER_ENDPOINT", "", "API server endpoint written into node userData; discovered with eks:DescribeCluster when empty"},
	{"cluster-ca-bundle", "CLUSTER_CA_BUNDLE", "", "base64 CA bundle for nodes; discovered with eks:DescribeCluster when empty"},
	{"interruption-queue", "INTERRUPTION_QUEUE", "", "SQS queue name for interruption events; empty disables interruption handling"},
	{"batch-idle-duration", "BATCH_IDLE_DURATION", "1s", "how long a scheduling batch waits for more pending pods after the last one"},
	{"batch-max-duration", "BATCH_MAX_DURATION", "10s", "the longest a scheduling batch collects pending pods"},
	{"vm-memory-overhead-percent", "VM_MEMORY_OVERHEAD_PERCENT", "0.075", "share of instance memory taken by the hypervisor, used until real capacity is observed"},
	{"reserved-enis", "RESERVED_ENIS", "0", "ENIs excluded from the max-pods computation"},
	{"feature-gates", "FEATURE_GATES", "", "comma-separated Gate=bool pairs (" + strings.Join(knownGateNames(), ", ") + ")"},
	{"aws-feature-gates", "AWS_FEATURE_GATES", "", "comma-separated Gate=bool pairs of the AWS provider (" + strings.Join(gateNames(AWSGates), ", ") + ")"},
	{"isolated-vpc", "ISOLATED_VPC", "false", "assume AWS services without VPC endpoints are unreachable: no Pricing API (embedded prices) and no IAM instance-profile cleanup"},
	{"disable-dry-run", "DISABLE_DRY_RUN", "false", "skip the EC2NodeClass permission checks (DryRun CreateLaunchTemplate, CreateFleet, RunInstances)"},
	{"eks-control-plane", "EKS_CONTROL_PLANE", "false", "read the Kubernetes version (for AMI aliases) from eks:DescribeCluster instead of the API server; missing cluster details are discovered with eks:DescribeCluster either way"},
	{"ami-refresh-interval", "AMI_REFRESH_INTERVAL", "1m", "how often AMIs are resolved again (at least 1m)"},
	{"subnet-refresh-interval", "SUBNET_REFRESH_INTERVAL", "1m", "how often subnets are resolved again (at least 1m)"},
	{"security-group-refresh-interval", "SECURITY_GROUP_REFRESH_INTERVAL", "1m", "how often security groups are resolved again (at least 1m)"},
	{"preference-policy", "PREFERENCE_POLICY", "Respect", "Respect or Ignore pod scheduling preferences"},
	{"min-values-policy", "MIN_VALUES_POLICY", "Strict", "Strict or BestEffort handling of requirement minValues"},
	{"node-cost", "NODE_COST", "0.002", "what a node costs beyond its price in $/h (launch, registration, per-node agents), added to each new node's price when scheduling compares instance types; 0 compares prices alone"},
	{"log-level", "LOG_LEVEL", "info", "debug, info or error"},
	{"metrics-port", "METRICS_PORT", "8080", "port of the Prometheus /metrics endpoint"},
	{"health-probe-port", "HEALTH_PROBE_PORT", "8081", "port of /healthz and /readyz"},
	{"disable-leader-election", "DISABLE_LEADER_ELECTION", "false", "run without a leader-election Lease (only one replica may run)"},
	{"leader-election-name", "LEADER_ELECTION_NAME", DefaultLeaderElectionName, "name of the leader-election Lease"},
	{"leader-election-namespace", "LEADER_ELECTION_NAMESPACE", "", "namespace of the leader-election Lease; default: the pod's namespace, else kube-system"},
	{"kube-client-qps", "KUBE_CLIENT_QPS", "200", "Kubernetes client queries per second"},
	{"kube-client-burst", "KUBE_CLIENT_BURST", "300", "Kubernetes client burst"},
	{"cpu-requests", "CPU_REQUESTS", "1000", "the controller's CPU request in millicores; controller workers scale with it as in Karpenter (the base count at one core, up to 100 times it at 60)"},
	{"kubeconfig", "KUBECONFIG", "", "kubeconfig for running outside the cluster; empty uses the in-cluster service account"},
	{"enable-profiling", "ENABLE_PROFILING", "false", "serve Go's pprof handlers under /debug/pprof/ on the metrics port"},
	{"memory-limit", "MEMORY_LIMIT", "-1", "the container's memory limit in bytes (-1: none); the Go heap's soft limit is 90% of it"},
}

// ParseSettings reads args (flags) over env (getenv) and validates the
// result. Errors name the setting and the fix.
func ParseSettings(args []string, getenv func(string) string) (*Settings, error) {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	values := map[string]*string{}
	for _, s := range append(append([]setting{}, settings...), foreign...) {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		v := &settingValue{s: def, isBool: s.def == "true" || s.def == "false"}
		fs.Var(v, s.flag, fmt.Sprintf("%s (env %s)", s.usage, s.env))
		values[s.flag] = &v.s
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errors.New(Usage())
		}
		return nil, fmt.Errorf("controller: %w; run `terraform-provider-joist controller -h` for the settings", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("controller: unexpected argument %q; settings are flags (--name=value) or environment variables", fs.Arg(0))
	}
	get := func(name string) string { return strings.TrimSpace(*values[name]) }
	p := parser{get: get}
	st := &Settings{
		ClusterName:             get("cluster-name"),
		ClusterEndpoint:         get("cluster-endpoint"),
		ClusterCABundle:         get("cluster-ca-bundle"),
		InterruptionQueue:       get("interruption-queue"),
		BatchIdleDuration:       p.duration("batch-idle-duration"),
		BatchMaxDuration:        p.duration("batch-max-duration"),
		VMMemoryOverheadPercent: p.float("vm-memory-overhead-percent"),
		ReservedENIs:            p.int("reserved-enis"),
		PreferencePolicy:        get("preference-policy"),
		MinValuesPolicy:         get("min-values-policy"),
		NodeCost:                p.float("node-cost"),
		LogLevel:                strings.ToLower(get("log-level")),
		MetricsPort:             p.int("metrics-port"),
		HealthProbePort:         p.int("health-probe-port"),
		DisableLeaderElection:   p.bool("disable-leader-election"),
		LeaderElectionName:      get("leader-election-name"),
		LeaderElectionNamespace: get("leader-election-namespace"),
		KubeClientQPS:           p.int("kube-client-qps"),
		KubeClientBurst:         p.int("kube-client-burst"),
		CPURequests:             p.int("cpu-requests"),
		Kubeconfig:              get("kubeconfig"),
		EnableProfiling:         p.bool("enable-profiling"),
		MemoryLimit:             p.int64("memory-limit"),
		IsolatedVPC:             p.bool("isolated-vpc"),
		DisableDryRun:           p.bool("disable-dry-run"),
		EKSControlPlane:         p.bool("eks-control-plane"),

		AMIRefreshInterval:           p.duration("ami-refresh-interval"),
		SubnetRefreshInterval:        p.duration("subnet-refresh-interval"),
		SecurityGroupRefreshInterval: p.duration("security-group-refresh-interval"),
	}
	gates, err := ParseFeatureGates(get("feature-gates"))
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("FEATURE_GATES (--feature-gates): %w", err))
	}
	st.FeatureGates = gates
	awsGates, err := parseGates(AWSGates, get("aws-feature-gates"))
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("AWS_FEATURE_GATES (--aws-feature-gates): %w", err))
	}
	st.AWSFeatureGates = awsGates
	for _, f := range foreign {
		if v := get(f.flag); !atDefault(f, v) {
			p.errs = append(p.errs, foreignError(f, v))
		}
	}
	return st, errors.Join(append(p.errs, st.validate(p.failed)...)...)
}

// settingValue is a flag's string; boolean settings may be given bare
// (--disable-leader-election).
type settingValue struct {
	s      string
	isBool bool
}

func (v *settingValue) String() string     { return v.s }
func (v *settingValue) Set(s string) error { v.s = s; return nil }
func (v *settingValue) IsBoolFlag() bool   { return v.isBool }

// validate checks ranges and combinations; settings that did not parse
// (failed) were reported already.
func (s *Settings) validate(failed map[string]bool) []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		if failed[name] {
			return
		}
		errs = append(errs, fmt.Errorf("%s: %s", describe(name), fmt.Sprintf(format, args...)))
	}
	if s.ClusterName == "" {
		bad("cluster-name", "is required: set it to the name of the EKS cluster the controller manages")
	}
	if s.BatchIdleDuration <= 0 {
		bad("batch-idle-duration", "must be a positive duration such as 1s")
	}
	if s.BatchMaxDuration <= 0 {
		bad("batch-max-duration", "must be a positive duration such as 10s")
	} else if s.BatchIdleDuration > s.BatchMaxDuration {
		bad("batch-max-duration", "(%s) must not be shorter than BATCH_IDLE_DURATION (%s)", s.BatchMaxDuration, s.BatchIdleDuration)
	}
	if s.VMMemoryOverheadPercent < 0 || s.VMMemoryOverheadPercent >= 1 {
		bad("vm-memory-overhead-percent", "must be a fraction in [0, 1), e.g. 0.075 for 7.5%%")
	}
	if s.ReservedENIs < 0 {
		bad("reserved-enis", "must be 0 or more")
	}
	if s.PreferencePolicy != "Respect" && s.PreferencePolicy != "Ignore" {
		bad("preference-policy", "is %q; use Respect or Ignore", s.PreferencePolicy)
	}
	if s.MinValuesPolicy != "Strict" && s.MinValuesPolicy != "BestEffort" {
		bad("min-values-policy", "is %q; use Strict or BestEffort", s.MinValuesPolicy)
	}
	if s.NodeCost < 0 || math.IsNaN(s.NodeCost) || math.IsInf(s.NodeCost, 0) {
		bad("node-cost", "is %v; use a cost in $/h of 0 or more, e.g. 0.002", s.NodeCost)
	}
	switch s.LogLevel {
	case "debug", "info", "error":
	default:
		bad("log-level", "is %q; use debug, info or error", s.LogLevel)
	}
	for _, port := range []struct {
		name string
		v    int
	}{{"metrics-port", s.MetricsPort}, {"health-probe-port", s.HealthProbePort}} {
		if port.v < 0 || port.v > 65535 {
			bad(port.name, "is %d; use a TCP port between 1 and 65535 (0 picks a free port)", port.v)
		}
	}
	if s.MetricsPort != 0 && s.MetricsPort == s.HealthProbePort {
		bad("health-probe-port", "must differ from METRICS_PORT (both %d)", s.MetricsPort)
	}
	if s.KubeClientQPS <= 0 {
		bad("kube-client-qps", "must be positive")
	}
	if s.KubeClientBurst < s.KubeClientQPS {
		bad("kube-client-burst", "(%d) must be at least KUBE_CLIENT_QPS (%d)", s.KubeClientBurst, s.KubeClientQPS)
	}
	if s.CPURequests <= 0 {
		bad("cpu-requests", "must be a positive number of millicores")
	}
	if s.MemoryLimit == 0 || s.MemoryLimit < -1 {
		bad("memory-limit", "is %d; use the container's memory limit in bytes, or -1 for none", s.MemoryLimit)
	}
	for _, r := range []struct {
		name string
		v    time.Duration
	}{{"ami-refresh-interval", s.AMIRefreshInterval}, {"subnet-refresh-interval", s.SubnetRefreshInterval}, {"security-group-refresh-interval", s.SecurityGroupRefreshInterval}} {
		if r.v < time.Minute {
			bad(r.name, "is %s; it must be at least 1m", r.v)
		}
	}
	if !s.DisableLeaderElection && s.LeaderElectionName == "" {
		bad("leader-election-name", "must not be empty while leader election is on")
	}
	return errs
}

// NominationTTL is how long a pod stays nominated to a node or claim:
// max(2 x BATCH_MAX_DURATION, 10s).
func (s *Settings) NominationTTL() time.Duration {
	return max(2*s.BatchMaxDuration, 10*time.Second)
}

// describe renders a setting as "ENV (--flag)".
func describe(flagName string) string {
	for _, s := range settings {
		if s.flag == flagName {
			return fmt.Sprintf("%s (--%s)", s.env, s.flag)
		}
	}
	return "--" + flagName
}

// Usage lists every setting with its environment variable and default.
func Usage() string {
	var b strings.Builder
	rows := func(list []setting) {
		for _, s := range list {
			def := s.def
			if def == "" {
				def = `""`
			}
			fmt.Fprintf(&b, "  --%-28s %-28s %-12s %s\n", s.flag, s.env, def, s.usage)
		}
	}
	b.WriteString("usage: terraform-provider-joist controller [--setting=value ...]\n\nSettings (flag, environment variable, default):\n")
	rows(settings)
	b.WriteString("\nKarpenter settings accepted only at their defaults (Joist does not act on them):\n")
	rows(foreign)
	return b.String()
}

// parser converts setting strings, collecting errors that name the setting.
type parser struct {
	get    func(string) string
	errs   []error
	failed map[string]bool
}

func (p *parser) fail(name, v, want string) {
	if p.failed == nil {
		p.failed = map[string]bool{}
	}
	p.failed[name] = true
	p.errs = append(p.errs, fmt.Errorf("%s: %q is not %s", describe(name), v, want))
}

func (p *parser) duration(name string) time.Duration {
	v := p.get(name)
	d, err := time.ParseDuration(v)
	if err != nil {
		p.fail(name, v, "a duration; use a value such as 1s or 500ms")
	}
	return d
}

func (p *parser) float(name string) float64 {
	v := p.get(name)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		p.fail(name, v, "a number; use a value such as 0.075")
	}
	return f
}

func (p *parser) int(name string) int {
	v := p.get(name)
	i, err := strconv.Atoi(v)
	if err != nil {
		p.fail(name, v, "an integer")
	}
	return i
}

func (p *parser) int64(name string) int64 {
	v := p.get(name)
	i, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		p.fail(name, v, "an integer number of bytes")
	}
	return i
}

func (p *parser) bool(name string) bool {
	v := p.get(name)
	b, err := strconv.ParseBool(v)
	if err != nil {
		p.fail(name, v, "a boolean; use true or false")
	}
	return b
}

// FeatureGates are feature gates by name, every known gate present.
type FeatureGates map[string]bool

// Gate is one of Karpenter's feature gates, with its default.
type Gate struct {
	Name    string
	Default bool
	// Unsupported says why Joist cannot act on the gate turned on; such a
	// gate is accepted only off. Empty when Joist honours it.
	Unsupported string
}

// Gates are Karpenter v1.15's feature gates (FEATURE_GATES), with its
// defaults.
var Gates = []Gate{
	{Name: "NodeRepair", Default: false},
	// Joist launches no reserved capacity; the gate's default (on) is kept
	// so Karpenter's settings apply unchanged.
	{Name: "ReservedCapacity", Default: true},
	{Name: "SpotToSpotConsolidation", Default: false},
	{Name: "NodeOverlay", Default: false},
	{Name: "StaticCapacity", Default: false},
	{Name: "CapacityBuffer", Default: false, Unsupported: "there is no CapacityBuffer API"},
	{Name: "TerminateFirstDrift", Default: false, Unsupported: "drifted nodes are replaced before they are terminated"},
	{Name: "TerminateFirstRepair", Default: false, Unsupported: "unhealthy nodes are terminated without a replacement launched first or instead"},
	{Name: "PodDeletionCostManagement", Default: false, Unsupported: "pod deletion costs are not written"},
}

// AWSGates are the AWS provider's feature gates (AWS_FEATURE_GATES).
var AWSGates = []Gate{
	{Name: "NodeClassCEL", Default: false, Unsupported: "EC2NodeClass kubelet values are not evaluated as CEL expressions"},
	{Name: "DRANVIDIAGPU", Default: false, Unsupported: "dynamic resource allocation is not simulated"},
	{Name: "DRAEFA", Default: false, Unsupported: "dynamic resource allocation is not simulated"},
	{Name: "RebootForRepair", Default: false, Unsupported: "unhealthy nodes are replaced, not rebooted"},
}

func gateNames(gates []Gate) []string {
	names := make([]string, 0, len(gates))
	for _, g := range gates {
		names = append(names, g.Name)
	}
	sort.Strings(names)
	return names
}

func knownGateNames() []string { return gateNames(Gates) }

// ParseFeatureGates reads FEATURE_GATES ("A=true,B=false") over the
// defaults. Unknown gates, values that are not booleans, and gates turned
// on that Joist cannot act on are errors naming the gate.
func ParseFeatureGates(s string) (FeatureGates, error) { return parseGates(Gates, s) }

func parseGates(known []Gate, s string) (FeatureGates, error) {
	out := FeatureGates{}
	byName := map[string]Gate{}
	for _, g := range known {
		out[g.Name] = g.Default
		byName[g.Name] = g
	}
	var errs []error
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		name = strings.TrimSpace(name)
		g, isKnown := byName[name]
		if !isKnown {
			errs = append(errs, fmt.Errorf("unknown gate %q; known gates are %s", name, strings.Join(gateNames(known), ", ")))
			continue
		}
		b, err := strconv.ParseBool(strings.TrimSpace(val))
		if !ok || err != nil {
			errs = append(errs, fmt.Errorf("gate %s needs a boolean value, e.g. %s=true", name, name))
			continue
		}
		if b && g.Unsupported != "" {
			errs = append(errs, fmt.Errorf("gate %s=true is not supported by Joist (%s); remove it or set %s=false", name, g.Unsupported, name))
			continue
		}
		out[name] = b
	}
	return out, errors.Join(errs...)
}

// Enabled reports whether the named gate is on.
func (g FeatureGates) Enabled(name string) bool { return g[name] }

// atDefault says whether v is the setting's default (booleans in any
// spelling ParseBool reads).
func atDefault(s setting, v string) bool {
	if s.def == "true" || s.def == "false" {
		b, err := strconv.ParseBool(v)
		return err == nil && strconv.FormatBool(b) == s.def
	}
	return v == s.def
}

func foreignError(f setting, v string) error {
	return fmt.Errorf("%s (--%s) is %q: Joist does not act on this Karpenter setting (%s); remove it or set it to %q", f.env, f.flag, v, f.usage, f.def)
}

// foreign are Karpenter settings Joist has no behaviour for (usage says
// why). Each is accepted at Karpenter's default, so Karpenter's settings
// apply unchanged, and refused at any other value rather than ignored.
var foreign = []setting{
	{"enable-zonal-shift", "ENABLE_ZONAL_SHIFT", "false", "ARC zonal shifts are not followed"},
	{"ignore-dra-requests", "IGNORE_DRA_REQUESTS", "true", "dynamic resource allocation requests are always ignored in scheduling"},
	{"legacy-node-repair", "LEGACY_NODE_REPAIR", "false", "there is one node repair controller"},
	{"scheduler-config", "SCHEDULER_CONFIG", "", "default topology spread constraints are not injected into pods"},
	{"disable-controller-warmup", "DISABLE_CONTROLLER_WARMUP", "true", "caches are not warmed before the leader election is won"},
	{"disable-cluster-state-observability", "DISABLE_CLUSTER_STATE_OBSERVABILITY", "false", "cluster state metrics are always served"},
	{"log-output-paths", "LOG_OUTPUT_PATHS", "stdout", "logs go to stdout"},
	{"log-error-output-paths", "LOG_ERROR_OUTPUT_PATHS", "stderr", "error logs go to stderr"},
	{"karpenter-service", "KARPENTER_SERVICE", "", "there are no webhooks"},
}
