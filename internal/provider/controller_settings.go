package provider

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

// settingKind is the Terraform type of a controller setting.
type settingKind int

const (
	settingString settingKind = iota
	settingDuration
	settingBool
	settingInt
	settingFloat
	settingList // comma-separated in the environment
)

// controllerSetting is one of Karpenter v1.15's controller settings as a
// joist_controller attribute: the environment variable the controller
// reads, the Helm chart value it comes from there, and Karpenter's default.
// Which settings Joist's controller implements, and their rules, are the
// runtime's (internal/runtime/operator/settings); a setting it does not
// implement is accepted only at its default, so nothing is silently ignored.
type controllerSetting struct {
	attr, env string
	// chart is the Helm chart value; "" for a setting the chart does not
	// expose (a flag or variable only).
	chart string
	kind  settingKind
	// def is Karpenter's default as the environment holds it; "" none.
	def   string
	doc   string
	oneOf []string
	// joist marks a setting of Joist's controller that Karpenter does not
	// have; def is Joist's default.
	joist bool
}

var controllerSettings = []controllerSetting{
	{attr: "cluster_endpoint", env: "CLUSTER_ENDPOINT", chart: "settings.clusterEndpoint", kind: settingString,
		doc: "API server endpoint written into node user data; discovered with `eks:DescribeCluster` when unset."},
	{attr: "cluster_ca_bundle", env: "CLUSTER_CA_BUNDLE", chart: "settings.clusterCABundle", kind: settingString,
		doc: "Base64 CA bundle nodes use to trust the API server; discovered with `eks:DescribeCluster` when unset."},
	{attr: "interruption_queue", env: "INTERRUPTION_QUEUE", chart: "settings.interruptionQueue", kind: settingString,
		doc: "Interruption queue name (`joist_interruption_queue.name`); unset disables interruption handling."},
	{attr: "batch_idle_duration", env: "BATCH_IDLE_DURATION", chart: "settings.batchIdleDuration", kind: settingDuration, def: "1s",
		doc: "How long a provisioning batch waits after the last pending pod before it closes (Go duration)."},
	{attr: "batch_max_duration", env: "BATCH_MAX_DURATION", chart: "settings.batchMaxDuration", kind: settingDuration, def: "10s",
		doc: "The longest a provisioning batch collects pending pods (Go duration, at least `batch_idle_duration`)."},
	{attr: "preference_policy", env: "PREFERENCE_POLICY", chart: "settings.preferencePolicy", kind: settingString, def: "Respect", oneOf: []string{"Respect", "Ignore"},
		doc: "Whether scheduling honours pods' preferred affinities and `ScheduleAnyway` spread constraints (`Respect`) or ignores them (`Ignore`)."},
	{attr: "min_values_policy", env: "MIN_VALUES_POLICY", chart: "settings.minValuesPolicy", kind: settingString, def: "Strict", oneOf: []string{"Strict", "BestEffort"},
		doc: "Whether a NodePool requirement's `minValues` that cannot be met fails scheduling (`Strict`) or is relaxed (`BestEffort`)."},
	{attr: "isolated_vpc", env: "ISOLATED_VPC", chart: "settings.isolatedVPC", kind: settingBool, def: "false",
		doc: "Assume AWS services without a VPC endpoint are unreachable (no on-demand price lookups)."},
	{attr: "eks_control_plane", env: "EKS_CONTROL_PLANE", chart: "settings.eksControlPlane", kind: settingBool, def: "false",
		doc: "Discover cluster details from the EKS `DescribeCluster` API."},
	{attr: "vm_memory_overhead_percent", env: "VM_MEMORY_OVERHEAD_PERCENT", chart: "settings.vmMemoryOverheadPercent", kind: settingFloat, def: "0.075",
		doc: "Share of an instance's memory taken by the hypervisor, used until the real capacity is observed (0.075 is 7.5%)."},
	{attr: "enable_zonal_shift", env: "ENABLE_ZONAL_SHIFT", chart: "settings.enableZonalShift", kind: settingBool, def: "false",
		doc: "Avoid zones under an EKS zonal shift when launching nodes."},
	{attr: "reserved_enis", env: "RESERVED_ENIS", chart: "settings.reservedENIs", kind: settingInt, def: "0",
		doc: "ENIs left out of the max-pods and kube-reserved computation (VPC CNI custom networking)."},
	{attr: "ignore_dra_requests", env: "IGNORE_DRA_REQUESTS", chart: "settings.ignoreDRARequests", kind: settingBool, def: "true",
		doc: "Ignore pods' dynamic resource allocation requests in scheduling simulations."},
	{attr: "legacy_node_repair", env: "LEGACY_NODE_REPAIR", chart: "settings.legacyNodeRepair", kind: settingBool, def: "false",
		doc: "Run the legacy node repair controller instead of repair as a disruption method (with the `NodeRepair` gate)."},
	{attr: "disable_cluster_state_observability", env: "DISABLE_CLUSTER_STATE_OBSERVABILITY", chart: "settings.disableClusterStateObservability", kind: settingBool, def: "false",
		doc: "Turn off the cluster state metrics and events."},
	{attr: "disable_dry_run", env: "DISABLE_DRY_RUN", chart: "settings.disableDryRun", kind: settingBool, def: "false",
		doc: "Skip the dry-run validation of EC2NodeClasses."},
	{attr: "ami_refresh_interval", env: "AMI_REFRESH_INTERVAL", chart: "settings.amiRefreshInterval", kind: settingDuration, def: "1m",
		doc: "How often AMIs are looked up again (Go duration, at least 1m)."},
	{attr: "subnet_refresh_interval", env: "SUBNET_REFRESH_INTERVAL", chart: "settings.subnetRefreshInterval", kind: settingDuration, def: "1m",
		doc: "How often subnets are looked up again (Go duration, at least 1m)."},
	{attr: "security_group_refresh_interval", env: "SECURITY_GROUP_REFRESH_INTERVAL", chart: "settings.securityGroupRefreshInterval", kind: settingDuration, def: "1m",
		doc: "How often security groups are looked up again (Go duration, at least 1m)."},
	{attr: "log_level", env: "LOG_LEVEL", chart: "logLevel", kind: settingString, def: "info", oneOf: []string{"debug", "info", "error"},
		doc: "Log verbosity: `debug`, `info` or `error`."},
	{attr: "log_output_paths", env: "LOG_OUTPUT_PATHS", chart: "logOutputPaths", kind: settingList, def: "stdout",
		doc: "Where logs go."},
	{attr: "log_error_output_paths", env: "LOG_ERROR_OUTPUT_PATHS", chart: "logErrorOutputPaths", kind: settingList, def: "stderr",
		doc: "Where the logger's own errors go."},
	{attr: "kube_client_qps", env: "KUBE_CLIENT_QPS", kind: settingInt, def: "200",
		doc: "Queries per second the controller's Kubernetes client may send."},
	{attr: "kube_client_burst", env: "KUBE_CLIENT_BURST", kind: settingInt, def: "300",
		doc: "Burst of the controller's Kubernetes client (at least `kube_client_qps`)."},
	{attr: "enable_profiling", env: "ENABLE_PROFILING", kind: settingBool, def: "false",
		doc: "Serve Go's pprof handlers under `/debug/pprof/` on the metrics port."},
	{attr: "disable_controller_warmup", env: "DISABLE_CONTROLLER_WARMUP", kind: settingBool, def: "true",
		doc: "Do not start the controllers' caches before leader election is won."},
	{attr: "disable_leader_election", env: "DISABLE_LEADER_ELECTION", kind: settingBool, def: "false",
		doc: "Run without a leader-election Lease; only with `replicas = 1`."},
	{attr: "node_cost", env: "NODE_COST", kind: settingFloat, def: "0.002", joist: true,
		doc: "What a node costs beyond its price, in $/h (a launch and registration, per-node agents and licences, control-plane load), added to each new node's price when scheduling compares instance types: between shapes within about this much per node the larger wins, so fewer nodes run. `0` compares prices alone. Not applied where a NodePool's limits could run out."},
	{attr: "scheduler_config", env: "SCHEDULER_CONFIG", kind: settingString,
		doc: "YAML or JSON of the kube-scheduler settings scheduling simulations mirror (`podTopologySpread.defaultConstraints`)."},
}

// derivedSettings are environment variables joist_controller sets from
// other attributes; extra_env may not set them.
var derivedSettings = map[string]string{
	"CLUSTER_NAME": "cluster_name", "AWS_REGION": "aws_region", "CPU_REQUESTS": "cpu_request", "MEMORY_LIMIT": "memory_limit",
	"METRICS_PORT": "metrics_port", "HEALTH_PROBE_PORT": "health_probe_port", "LEADER_ELECTION_NAMESPACE": "namespace",
	"FEATURE_GATES": "feature_gates", "AWS_FEATURE_GATES": "aws_feature_gates",
}

// controllerSettingsModel holds the setting attributes, named as in
// controllerSettings.
type controllerSettingsModel struct {
	ClusterEndpoint                  types.String  `tfsdk:"cluster_endpoint"`
	ClusterCABundle                  types.String  `tfsdk:"cluster_ca_bundle"`
	InterruptionQueue                types.String  `tfsdk:"interruption_queue"`
	BatchIdleDuration                types.String  `tfsdk:"batch_idle_duration"`
	BatchMaxDuration                 types.String  `tfsdk:"batch_max_duration"`
	PreferencePolicy                 types.String  `tfsdk:"preference_policy"`
	MinValuesPolicy                  types.String  `tfsdk:"min_values_policy"`
	IsolatedVPC                      types.Bool    `tfsdk:"isolated_vpc"`
	EKSControlPlane                  types.Bool    `tfsdk:"eks_control_plane"`
	VMMemoryOverheadPercent          types.Float64 `tfsdk:"vm_memory_overhead_percent"`
	EnableZonalShift                 types.Bool    `tfsdk:"enable_zonal_shift"`
	ReservedENIs                     types.Int64   `tfsdk:"reserved_enis"`
	IgnoreDRARequests                types.Bool    `tfsdk:"ignore_dra_requests"`
	LegacyNodeRepair                 types.Bool    `tfsdk:"legacy_node_repair"`
	DisableClusterStateObservability types.Bool    `tfsdk:"disable_cluster_state_observability"`
	DisableDryRun                    types.Bool    `tfsdk:"disable_dry_run"`
	AMIRefreshInterval               types.String  `tfsdk:"ami_refresh_interval"`
	SubnetRefreshInterval            types.String  `tfsdk:"subnet_refresh_interval"`
	SecurityGroupRefreshInterval     types.String  `tfsdk:"security_group_refresh_interval"`
	LogLevel                         types.String  `tfsdk:"log_level"`
	LogOutputPaths                   types.List    `tfsdk:"log_output_paths"`
	LogErrorOutputPaths              types.List    `tfsdk:"log_error_output_paths"`
	KubeClientQPS                    types.Int64   `tfsdk:"kube_client_qps"`
	KubeClientBurst                  types.Int64   `tfsdk:"kube_client_burst"`
	EnableProfiling                  types.Bool    `tfsdk:"enable_profiling"`
	DisableControllerWarmup          types.Bool    `tfsdk:"disable_controller_warmup"`
	DisableLeaderElection            types.Bool    `tfsdk:"disable_leader_election"`
	NodeCost                         types.Float64 `tfsdk:"node_cost"`
	SchedulerConfig                  types.String  `tfsdk:"scheduler_config"`
}

// values are the settings' attribute values by attribute name.
func (m controllerSettingsModel) values() map[string]attr.Value {
	out := map[string]attr.Value{}
	v := reflect.ValueOf(m)
	for i := range v.NumField() {
		out[v.Type().Field(i).Tag.Get("tfsdk")] = v.Field(i).Interface().(attr.Value)
	}
	return out
}

// set stores a value by attribute name.
func (m *controllerSettingsModel) set(name string, val attr.Value) {
	v := reflect.ValueOf(m).Elem()
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("tfsdk") == name {
			v.Field(i).Set(reflect.ValueOf(val))
			return
		}
	}
	panic("no setting attribute " + name)
}

// settingAttributes are the settings' schema attributes.
func settingAttributes() map[string]schema.Attribute {
	out := map[string]schema.Attribute{}
	for _, s := range controllerSettings {
		out[s.attr] = s.schema()
	}
	return out
}

func (s controllerSetting) description() string {
	var b strings.Builder
	fmt.Fprintf(&b, "`%s`: %s%s", s.env, strings.ToLower(s.doc[:1]), s.doc[1:])
	switch {
	case s.joist:
		b.WriteString(" Joist's own setting; Karpenter has none.")
	case s.chart != "":
		fmt.Fprintf(&b, " `%s` in Karpenter's Helm chart.", s.chart)
	default:
		fmt.Fprintf(&b, " Karpenter's `--%s` (not in its Helm chart).", strings.ReplaceAll(strings.ToLower(s.env), "_", "-"))
	}
	if s.def != "" && s.joist {
		fmt.Fprintf(&b, " Defaults to `%s`.", s.def)
	} else if s.def != "" {
		def := s.def
		if s.kind == settingList {
			def = `["` + strings.ReplaceAll(def, ",", `", "`) + `"]`
		}
		fmt.Fprintf(&b, " Defaults to `%s`, as in Karpenter.", def)
	}
	if !settings.Known(s.env) {
		b.WriteString(" Joist's controller does not implement this setting: only the default is accepted, and `terraform plan` rejects any other value.")
	}
	return b.String()
}

func (s controllerSetting) schema() schema.Attribute {
	doc, hasDef := s.description(), s.def != ""
	switch s.kind {
	case settingBool:
		b, _ := strconv.ParseBool(s.def)
		return schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(b), MarkdownDescription: doc}
	case settingInt:
		n, _ := strconv.ParseInt(s.def, 10, 64)
		return schema.Int64Attribute{Optional: true, Computed: true, Default: int64default.StaticInt64(n), MarkdownDescription: doc,
			Validators: []validator.Int64{int64validator.AtLeast(0)}}
	case settingFloat:
		f, _ := strconv.ParseFloat(s.def, 64)
		return schema.Float64Attribute{Optional: true, Computed: true, Default: float64default.StaticFloat64(f), MarkdownDescription: doc,
			Validators: []validator.Float64{float64validator.AtLeast(0)}}
	case settingList:
		return schema.ListAttribute{Optional: true, Computed: true, ElementType: types.StringType, MarkdownDescription: doc,
			Default: listdefault.StaticValue(stringList(strings.Split(s.def, ",")))}
	}
	a := schema.StringAttribute{Optional: true, MarkdownDescription: doc}
	if hasDef {
		a.Computed, a.Default = true, stringdefault.StaticString(s.def)
	}
	if s.kind == settingDuration {
		a.Validators = append(a.Validators, durationValidator{})
	}
	if len(s.oneOf) > 0 {
		a.Validators = append(a.Validators, stringvalidator.OneOf(s.oneOf...))
	}
	return a
}

// envValue is a known setting value as the environment holds it; ok is
// false when it is unknown (not known until apply) or null.
func (s controllerSetting) envValue(ctx context.Context, v attr.Value) (string, bool) {
	if v == nil || v.IsNull() || v.IsUnknown() {
		return "", false
	}
	switch x := v.(type) {
	case basetypes.BoolValue:
		return strconv.FormatBool(x.ValueBool()), true
	case basetypes.Int64Value:
		return strconv.FormatInt(x.ValueInt64(), 10), true
	case basetypes.Float64Value:
		return strconv.FormatFloat(x.ValueFloat64(), 'f', -1, 64), true
	case basetypes.ListValue:
		var items []string
		if d := x.ElementsAs(ctx, &items, false); d.HasError() {
			return "", false
		}
		return strings.Join(items, ","), true
	case basetypes.StringValue:
		return x.ValueString(), true
	}
	return "", false
}

// isDefault compares an environment value with the default by meaning
// ("0.0750" is 0.075).
func (s controllerSetting) isDefault(v string) bool {
	switch s.kind {
	case settingBool:
		a, _ := strconv.ParseBool(v)
		b, _ := strconv.ParseBool(s.def)
		return a == b
	case settingFloat, settingInt:
		a, _ := strconv.ParseFloat(v, 64)
		b, _ := strconv.ParseFloat(s.def, 64)
		return a == b
	}
	return v == s.def
}

// settingsEnv is a joist_controller's controller environment and where
// each variable came from, for errors.
type settingsEnv struct {
	env   map[string]string
	paths map[string]path.Path
}

func (e *settingsEnv) put(name, value string, p path.Path) {
	e.env[name] = value
	e.paths[name] = p
}

// controllerEnvironment renders the settings of m as the controller's
// environment. Values not known yet are left out (the controller's
// defaults stand in for them when the settings are checked). A setting
// the controller does not implement is an error unless at its default.
func controllerEnvironment(ctx context.Context, m *controllerModel, diags *diag.Diagnostics) settingsEnv {
	e := settingsEnv{env: map[string]string{}, paths: map[string]path.Path{}}
	values := m.controllerSettingsModel.values()
	for _, s := range controllerSettings {
		v, ok := s.envValue(ctx, values[s.attr])
		if !ok {
			continue
		}
		if !settings.Known(s.env) {
			if err := settings.CheckUnimplemented(s.env, v); err != nil {
				diags.AddAttributeError(path.Root(s.attr), "Setting not implemented by Joist's controller",
					fmt.Sprintf("%s (%s in Karpenter): %s.", s.attr, chartOrFlag(s), err))
			}
			continue
		}
		if v == "" && s.kind == settingString {
			continue
		}
		e.put(s.env, v, path.Root(s.attr))
	}
	for _, x := range []struct {
		attr, env string
		v         types.String
	}{{"cluster_name", "CLUSTER_NAME", m.ClusterName}, {"aws_region", "AWS_REGION", m.AWSRegion}} {
		if !x.v.IsNull() && !x.v.IsUnknown() && x.v.ValueString() != "" {
			e.put(x.env, x.v.ValueString(), path.Root(x.attr))
		}
	}
	if gates := gateList(ctx, m.FeatureGates, diags); gates != "" {
		e.put("FEATURE_GATES", gates, path.Root("feature_gates"))
	}
	if gates := gateList(ctx, m.AWSFeatureGates, diags); gates != "" {
		e.put("AWS_FEATURE_GATES", gates, path.Root("aws_feature_gates"))
	}
	byEnv := map[string]string{}
	for _, s := range controllerSettings {
		byEnv[s.env] = s.attr
	}
	if !m.ExtraEnv.IsUnknown() {
		for k, v := range stringMap(ctx, m.ExtraEnv, diags) {
			p := path.Root("extra_env").AtMapKey(k)
			switch {
			case byEnv[k] != "":
				diags.AddAttributeError(p, "Setting has its own attribute", fmt.Sprintf("%s is the controller setting of the attribute %s: set %s instead, where terraform plan checks it", k, byEnv[k], byEnv[k]))
			case derivedSettings[k] != "":
				diags.AddAttributeError(p, "Setting is derived", fmt.Sprintf("%s is set from %s: remove it from extra_env", k, derivedSettings[k]))
			default:
				e.put(k, v, p)
			}
		}
	}
	return e
}

func chartOrFlag(s controllerSetting) string {
	if s.chart != "" {
		return "the Helm chart's " + s.chart
	}
	return "--" + strings.ReplaceAll(strings.ToLower(s.env), "_", "-")
}

// gateList renders a map of gates as "A=true,B=false", sorted.
func gateList(ctx context.Context, m types.Map, diags *diag.Diagnostics) string {
	if m.IsNull() || m.IsUnknown() {
		return ""
	}
	gates := map[string]bool{}
	diags.Append(m.ElementsAs(ctx, &gates, false)...)
	var pairs []string
	for k, v := range gates {
		pairs = append(pairs, fmt.Sprintf("%s=%t", k, v))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// checkSettings runs the controller's own settings parser on the
// environment the Deployment will hold, so a controller that would refuse
// to start is refused at plan; each error is reported on the attribute its
// variable comes from.
func checkSettings(e, derived settingsEnv, diags *diag.Diagnostics) {
	env, paths := map[string]string{}, map[string]path.Path{}
	for _, from := range []settingsEnv{derived, e} {
		for k, v := range from.env {
			env[k], paths[k] = v, from.paths[k]
		}
	}
	if env["CLUSTER_NAME"] == "" {
		env["CLUSTER_NAME"] = "known-after-apply"
	}
	_, err := settings.ParseSettings(nil, func(k string) string { return env[k] })
	if err == nil {
		return
	}
	for _, one := range splitErrors(err) {
		msg := one.Error()
		reported := false
		for name, p := range paths {
			if strings.HasPrefix(msg, name+" (") {
				diags.AddAttributeError(p, "Invalid controller setting", fmt.Sprintf("%s: %s. The controller would refuse to start with it.", p, msg))
				reported = true
				break
			}
		}
		if !reported {
			diags.AddError("Invalid controller settings", msg+". The controller would refuse to start with it.")
		}
	}
}

// splitErrors undoes errors.Join.
func splitErrors(err error) []error {
	// Only a joined error is split: a wrapped one keeps its prefix (the
	// setting it names).
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range joined.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}
