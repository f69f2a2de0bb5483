package provider

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/operator/settings"
)

// The inputs of terraform-aws-modules/eks's modules/karpenter (v21) and
// the values of Karpenter's Helm chart v1.15, by name.
var (
	eksKarpenterInputs = []string{
		"create", "tags", "cluster_name", "region", "create_iam_role", "enable_inline_policy", "iam_role_name",
		"iam_role_use_name_prefix", "iam_role_path", "iam_role_description", "iam_role_max_session_duration",
		"iam_role_permissions_boundary_arn", "iam_role_tags", "iam_policy_name", "iam_policy_use_name_prefix", "iam_policy_path",
		"iam_policy_description", "iam_role_override_assume_policy_documents", "iam_role_source_assume_policy_documents",
		"iam_policy_statements", "iam_role_policies", "ami_id_ssm_parameter_arns", "create_pod_identity_association", "namespace",
		"service_account", "enable_spot_termination", "queue_name", "queue_managed_sse_enabled", "queue_kms_master_key_id",
		"queue_kms_data_key_reuse_period_seconds", "queue_policy_statements", "create_node_iam_role", "cluster_ip_family",
		"node_iam_role_arn", "node_iam_role_name", "node_iam_role_use_name_prefix", "node_iam_role_path", "node_iam_role_description",
		"node_iam_role_max_session_duration", "node_iam_role_permissions_boundary", "node_iam_role_attach_cni_policy",
		"node_iam_role_additional_policies", "node_iam_role_tags", "create_access_entry", "access_entry_type",
		"create_instance_profile", "rule_name_prefix",
	}
	chartValues = []string{
		"nameOverride", "fullnameOverride", "additionalLabels", "additionalAnnotations", "imagePullPolicy", "imagePullSecrets",
		"service.annotations", "serviceAccount.create", "serviceAccount.name", "serviceAccount.annotations", "additionalClusterRoleRules",
		"serviceMonitor.enabled", "serviceMonitor.additionalLabels", "serviceMonitor.relabelings", "serviceMonitor.metricRelabelings",
		"serviceMonitor.endpointConfig", "serviceMonitor.sampleLimit", "replicas", "revisionHistoryLimit", "strategy", "podLabels",
		"podAnnotations", "podDisruptionBudget.name", "podDisruptionBudget.maxUnavailable", "podSecurityContext", "priorityClassName",
		"terminationGracePeriodSeconds", "hostNetwork", "schedulerName", "dnsPolicy", "dnsConfig", "initContainers", "nodeSelector",
		"affinity", "topologySpreadConstraints", "tolerations", "extraVolumes", "controller.containerName", "controller.image.repository",
		"controller.image.tag", "controller.image.digest", "controller.env", "controller.envFrom", "controller.securityContext.appArmorProfile",
		"controller.securityContext.seLinuxOptions", "controller.securityContext.seccompProfile", "controller.resources",
		"controller.extraVolumeMounts", "controller.sidecarContainer", "controller.sidecarVolumeMounts", "controller.metrics.port",
		"controller.healthProbe.port", "logLevel", "logOutputPaths", "logErrorOutputPaths", "settings.batchMaxDuration",
		"settings.batchIdleDuration", "settings.preferencePolicy", "settings.minValuesPolicy", "settings.clusterCABundle",
		"settings.clusterName", "settings.clusterEndpoint", "settings.isolatedVPC", "settings.eksControlPlane",
		"settings.vmMemoryOverheadPercent", "settings.interruptionQueue", "settings.enableZonalShift", "settings.reservedENIs",
		"settings.enableDRA", "settings.ignoreDRARequests", "settings.legacyNodeRepair", "settings.disableClusterStateObservability",
		"settings.disableDryRun", "settings.amiRefreshInterval", "settings.subnetRefreshInterval", "settings.securityGroupRefreshInterval",
	}
	// karpenterGates are Karpenter v1.15's feature gates.
	karpenterGates = []string{"NodeRepair", "NodeOverlay", "ReservedCapacity", "SpotToSpotConsolidation", "StaticCapacity",
		"CapacityBuffer", "TerminateFirstDrift", "TerminateFirstRepair", "PodDeletionCostManagement"}
)

// guideRows reads the migration guide's table rows by their first cell.
func guideRows(t *testing.T) map[string]string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "docs", "guides", "migrating-from-karpenter.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		rows[first] = line
	}
	return rows
}

// TestMigrationGuideCoversEveryInput: every EKS module input and every
// chart value has a row, and the rows say "not implemented" exactly where
// the controller does not implement the setting or gate.
func TestMigrationGuideCoversEveryInput(t *testing.T) {
	rows := guideRows(t)
	for _, name := range eksKarpenterInputs {
		if rows[name] == "" {
			t.Errorf("the migration guide has no row for the EKS module's %s", name)
		}
	}
	for _, name := range chartValues {
		if rows[name] == "" {
			t.Errorf("the migration guide has no row for the chart's %s", name)
		}
	}
	for _, s := range controllerSettings {
		if s.chart == "" {
			continue
		}
		row := rows[s.chart]
		if !strings.Contains(row, "`"+s.attr+"`") {
			t.Errorf("the row of %s does not name %s: %s", s.chart, s.attr, row)
		}
		if got, want := strings.Contains(row, "not implemented"), !settings.Known(s.env); got != want {
			t.Errorf("the row of %s says not implemented: %v; the controller implements %s: %v", s.chart, got, s.env, !want)
		}
	}
	known := map[string]bool{}
	for _, g := range settings.GateNames() {
		known[g] = true
	}
	for _, g := range karpenterGates {
		chartName := "settings.featureGates." + strings.ToLower(g[:1]) + g[1:]
		if got := strings.Contains(rows[chartName], "not implemented"); got == known[g] {
			t.Errorf("the row of %s says not implemented: %v; the controller knows the gate: %v", chartName, got, known[g])
		}
	}
	for _, g := range karpenterAWSGates {
		var chartName string
		for name, row := range rows {
			if strings.HasPrefix(name, "settings.awsFeatureGates.") && strings.Contains(row, g+" = ") {
				chartName = name
			}
		}
		if chartName == "" {
			t.Errorf("the migration guide has no row for the AWS feature gate %s", g)
		} else if strings.Contains(rows[chartName], "not implemented") == settings.Known("AWS_FEATURE_GATES") {
			t.Errorf("the row of %s is wrong about AWS_FEATURE_GATES being implemented", chartName)
		}
	}
}

// TestSettingDefaultsAreKarpenters: where the controller has a setting,
// its default is the one joist_controller documents and plans (Karpenter's).
func TestSettingDefaultsAreKarpenters(t *testing.T) {
	for _, s := range controllerSettings {
		if !settings.Known(s.env) {
			continue
		}
		if got := settings.Default(s.env); got != s.def && !(s.kind != settingString && s.kind != settingDuration && s.isDefault(got)) {
			t.Errorf("%s: the controller's default is %q, joist_controller's %q", s.env, got, s.def)
		}
	}
}
