package settings

import (
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestSettingsDefaults(t *testing.T) {
	s, err := ParseSettings(nil, env(map[string]string{"CLUSTER_NAME": "prod"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.ClusterName != "prod" || s.BatchIdleDuration != time.Second || s.BatchMaxDuration != 10*time.Second ||
		s.VMMemoryOverheadPercent != 0.075 || s.ReservedENIs != 0 || s.MetricsPort != 8080 || s.HealthProbePort != 8081 ||
		s.DisableLeaderElection || s.LeaderElectionName != "karpenter-leader-election" || s.KubeClientQPS != 200 ||
		s.KubeClientBurst != 300 || s.LogLevel != "info" || s.PreferencePolicy != "Respect" || s.MinValuesPolicy != "Strict" ||
		s.EnableProfiling || s.MemoryLimit != -1 || s.NodeCost != 0.002 {
		t.Errorf("defaults: %+v", s)
	}
	if s.FeatureGates.Enabled("SpotToSpotConsolidation") || !s.FeatureGates.Enabled("ReservedCapacity") {
		t.Errorf("feature gate defaults: %v", s.FeatureGates)
	}
	if got := s.NominationTTL(); got != 20*time.Second {
		t.Errorf("nomination TTL = %s, want 20s", got)
	}
}

// TestNodeCostSetting: NODE_COST and --node-cost set what scheduling adds
// to each new node's price; 0 (prices alone) is accepted.
func TestNodeCostSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want float64
	}{
		{map[string]string{"CLUSTER_NAME": "c", "NODE_COST": "0.05"}, nil, 0.05},
		{map[string]string{"CLUSTER_NAME": "c", "NODE_COST": "0.05"}, []string{"--node-cost=0"}, 0},
	} {
		s, err := ParseSettings(tc.args, env(tc.env))
		if err != nil {
			t.Fatal(err)
		}
		if s.NodeCost != tc.want {
			t.Errorf("%v %v: node cost %v, want %v", tc.env, tc.args, s.NodeCost, tc.want)
		}
	}
}

func TestSettingsFlagOverridesEnvironment(t *testing.T) {
	s, err := ParseSettings([]string{"--batch-idle-duration=2s", "--feature-gates=SpotToSpotConsolidation=true", "--disable-leader-election"},
		env(map[string]string{"CLUSTER_NAME": "prod", "BATCH_IDLE_DURATION": "5s", "BATCH_MAX_DURATION": "20s", "KUBECONFIG": "/k",
			"ENABLE_PROFILING": "true", "MEMORY_LIMIT": "1073741824"}))
	if err != nil {
		t.Fatal(err)
	}
	if s.BatchIdleDuration != 2*time.Second || s.BatchMaxDuration != 20*time.Second || s.Kubeconfig != "/k" || !s.DisableLeaderElection ||
		!s.EnableProfiling || s.MemoryLimit != 1<<30 {
		t.Errorf("got %+v", s)
	}
	if !s.FeatureGates.Enabled("SpotToSpotConsolidation") {
		t.Error("SpotToSpotConsolidation not enabled")
	}
}

func TestSettingsRejectedWithTheSettingAndFix(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"cluster name required", map[string]string{}, nil, []string{"CLUSTER_NAME (--cluster-name)", "is required"}},
		{"bad duration", map[string]string{"CLUSTER_NAME": "c", "BATCH_IDLE_DURATION": "soon"}, nil, []string{"BATCH_IDLE_DURATION", "1s"}},
		{"idle above max", map[string]string{"CLUSTER_NAME": "c", "BATCH_IDLE_DURATION": "30s"}, nil, []string{"BATCH_MAX_DURATION", "must not be shorter"}},
		{"overhead fraction", map[string]string{"CLUSTER_NAME": "c", "VM_MEMORY_OVERHEAD_PERCENT": "7.5"}, nil, []string{"VM_MEMORY_OVERHEAD_PERCENT", "0.075"}},
		{"unknown gate", map[string]string{"CLUSTER_NAME": "c", "FEATURE_GATES": "Teleport=true"}, nil, []string{"FEATURE_GATES", "Teleport", "SpotToSpotConsolidation"}},
		{"gate value", map[string]string{"CLUSTER_NAME": "c"}, []string{"--feature-gates=NodeRepair"}, []string{"NodeRepair needs a boolean"}},
		{"log level", map[string]string{"CLUSTER_NAME": "c", "LOG_LEVEL": "loud"}, nil, []string{"LOG_LEVEL", "debug, info or error"}},
		{"memory limit unit", map[string]string{"CLUSTER_NAME": "c", "MEMORY_LIMIT": "1Gi"}, nil, []string{"MEMORY_LIMIT (--memory-limit)", "bytes"}},
		{"memory limit zero", map[string]string{"CLUSTER_NAME": "c", "MEMORY_LIMIT": "0"}, nil, []string{"MEMORY_LIMIT", "-1 for none"}},
		{"same ports", map[string]string{"CLUSTER_NAME": "c", "HEALTH_PROBE_PORT": "8080"}, nil, []string{"HEALTH_PROBE_PORT", "METRICS_PORT"}},
		{"burst below qps", map[string]string{"CLUSTER_NAME": "c", "KUBE_CLIENT_BURST": "10"}, nil, []string{"KUBE_CLIENT_BURST", "KUBE_CLIENT_QPS"}},
		{"unknown flag", map[string]string{"CLUSTER_NAME": "c"}, []string{"--cluster=x"}, []string{"cluster", "-h"}},
		{"preference policy", map[string]string{"CLUSTER_NAME": "c", "PREFERENCE_POLICY": "Maybe"}, nil, []string{"PREFERENCE_POLICY", "Respect or Ignore"}},
		{"negative node cost", map[string]string{"CLUSTER_NAME": "c", "NODE_COST": "-0.01"}, nil, []string{"NODE_COST (--node-cost)", "0 or more"}},
		{"node cost unit", map[string]string{"CLUSTER_NAME": "c", "NODE_COST": "$0.01"}, nil, []string{"NODE_COST (--node-cost)", "a number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSettings(tc.args, env(tc.env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestSettingsReportsAnUnparsableValueOnce(t *testing.T) {
	_, err := ParseSettings(nil, env(map[string]string{"CLUSTER_NAME": "c", "BATCH_IDLE_DURATION": "soon"}))
	if n := strings.Count(err.Error(), "BATCH_IDLE_DURATION"); n != 1 {
		t.Errorf("BATCH_IDLE_DURATION reported %d times: %v", n, err)
	}
}

func TestUsageListsEverySetting(t *testing.T) {
	u := Usage()
	for _, s := range settings {
		if !strings.Contains(u, s.env) || !strings.Contains(u, "--"+s.flag) {
			t.Errorf("usage misses %s", s.env)
		}
	}
	for _, f := range foreign {
		if !strings.Contains(u, f.env) {
			t.Errorf("usage misses %s", f.env)
		}
	}
}

// Karpenter v1.15's gates, by name and default.
func TestFeatureGatesAreKarpentersWithItsDefaults(t *testing.T) {
	want := map[string]bool{
		"NodeRepair": false, "ReservedCapacity": true, "SpotToSpotConsolidation": false, "NodeOverlay": false,
		"StaticCapacity": false, "CapacityBuffer": false, "TerminateFirstDrift": false, "TerminateFirstRepair": false,
		"PodDeletionCostManagement": false,
	}
	got, err := ParseFeatureGates("")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("gates %v, want %v", got, want)
	}
	for name, def := range want {
		if v, ok := got[name]; !ok || v != def {
			t.Errorf("gate %s = %v (known %v), want default %v", name, v, ok, def)
		}
	}
	aws, err := parseGates(AWSGates, "")
	if err != nil || len(aws) != 4 || aws["NodeClassCEL"] || aws["DRANVIDIAGPU"] || aws["DRAEFA"] || aws["RebootForRepair"] {
		t.Errorf("AWS gates %v (%v), want NodeClassCEL, DRANVIDIAGPU, DRAEFA, RebootForRepair off", aws, err)
	}
}

// The environment Karpenter's Helm chart renders, every setting at its
// default written out, applies unchanged.
func TestKarpentersDefaultSettingsApply(t *testing.T) {
	s, err := ParseSettings(nil, env(map[string]string{
		"CLUSTER_NAME": "prod", "BATCH_IDLE_DURATION": "1s", "BATCH_MAX_DURATION": "10s",
		"FEATURE_GATES": "ReservedCapacity=true,SpotToSpotConsolidation=false,NodeRepair=false,NodeOverlay=false,StaticCapacity=false," +
			"CapacityBuffer=false,TerminateFirstDrift=false,TerminateFirstRepair=false,PodDeletionCostManagement=false",
		"AWS_FEATURE_GATES": "NodeClassCEL=false,DRANVIDIAGPU=false,DRAEFA=false,RebootForRepair=false",
		"ISOLATED_VPC":      "false", "EKS_CONTROL_PLANE": "false", "DISABLE_DRY_RUN": "false", "ENABLE_ZONAL_SHIFT": "false",
		"IGNORE_DRA_REQUESTS": "true", "LEGACY_NODE_REPAIR": "false", "DISABLE_CONTROLLER_WARMUP": "true",
		"DISABLE_CLUSTER_STATE_OBSERVABILITY": "false", "LOG_OUTPUT_PATHS": "stdout", "LOG_ERROR_OUTPUT_PATHS": "stderr",
		"AMI_REFRESH_INTERVAL": "1m", "SUBNET_REFRESH_INTERVAL": "1m", "SECURITY_GROUP_REFRESH_INTERVAL": "1m",
		"CPU_REQUESTS": "1000", "MEMORY_LIMIT": "1073741824", "VM_MEMORY_OVERHEAD_PERCENT": "0.075", "RESERVED_ENIS": "0",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if s.IsolatedVPC || s.DisableDryRun || s.AMIRefreshInterval != time.Minute || s.SubnetRefreshInterval != time.Minute ||
		s.SecurityGroupRefreshInterval != time.Minute {
		t.Errorf("got %+v", s)
	}
}

func TestSettingsJoistActsOn(t *testing.T) {
	s, err := ParseSettings([]string{"--isolated-vpc", "--ami-refresh-interval=5m"}, env(map[string]string{
		"CLUSTER_NAME": "prod", "DISABLE_DRY_RUN": "true", "FEATURE_GATES": "SpotToSpotConsolidation=true,NodeOverlay=true",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsolatedVPC || !s.DisableDryRun || s.AMIRefreshInterval != 5*time.Minute || !s.FeatureGates.Enabled("SpotToSpotConsolidation") ||
		!s.FeatureGates.Enabled("NodeOverlay") {
		t.Errorf("got %+v", s)
	}
}

// A gate or setting Joist cannot act on is refused with its name, why, and
// the value to use; it is never accepted and ignored.
func TestSettingsJoistCannotActOnAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"capacity buffers", map[string]string{"FEATURE_GATES": "CapacityBuffer=true"}, []string{"FEATURE_GATES", "CapacityBuffer=true is not supported", "CapacityBuffer=false"}},
		{"terminate first", map[string]string{"FEATURE_GATES": "TerminateFirstDrift=true"}, []string{"TerminateFirstDrift=true is not supported"}},
		{"deletion cost", map[string]string{"FEATURE_GATES": "PodDeletionCostManagement=true"}, []string{"PodDeletionCostManagement=true is not supported"}},
		{"aws cel", map[string]string{"AWS_FEATURE_GATES": "NodeClassCEL=true"}, []string{"AWS_FEATURE_GATES", "NodeClassCEL=true is not supported"}},
		{"aws unknown", map[string]string{"AWS_FEATURE_GATES": "Warp=true"}, []string{"AWS_FEATURE_GATES", "Warp", "RebootForRepair"}},
		{"zonal shift", map[string]string{"ENABLE_ZONAL_SHIFT": "true"}, []string{"ENABLE_ZONAL_SHIFT (--enable-zonal-shift)", "does not act on", `set it to "false"`}},
		{"dra", map[string]string{"IGNORE_DRA_REQUESTS": "false"}, []string{"IGNORE_DRA_REQUESTS", `"true"`}},
		{"scheduler config", map[string]string{"SCHEDULER_CONFIG": "podTopologySpread: {}"}, []string{"SCHEDULER_CONFIG", "topology spread"}},
		{"log paths", map[string]string{"LOG_OUTPUT_PATHS": "/var/log/k.log"}, []string{"LOG_OUTPUT_PATHS", "stdout"}},
		{"refresh too fast", map[string]string{"SUBNET_REFRESH_INTERVAL": "10s"}, []string{"SUBNET_REFRESH_INTERVAL", "at least 1m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.env["CLUSTER_NAME"] = "c"
			_, err := ParseSettings(nil, env(tc.env))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	if _, err := ParseSettings([]string{"--legacy-node-repair=true"}, env(map[string]string{"CLUSTER_NAME": "c"})); err == nil || !strings.Contains(err.Error(), "LEGACY_NODE_REPAIR") {
		t.Errorf("--legacy-node-repair=true: %v", err)
	}
}

// NodeRepair is honoured, so it turns on; the repair gates Joist has no
// behaviour for stay refused.
func TestNodeRepairGateTurnsOn(t *testing.T) {
	got, err := ParseFeatureGates("NodeRepair=true")
	if err != nil || !got.Enabled("NodeRepair") {
		t.Errorf("NodeRepair=true: %v (%v)", got, err)
	}
	if _, err := ParseFeatureGates("TerminateFirstRepair=true"); err == nil || !strings.Contains(err.Error(), "TerminateFirstRepair=true is not supported") {
		t.Errorf("TerminateFirstRepair=true: %v", err)
	}
	if _, err := parseGates(AWSGates, "RebootForRepair=true"); err == nil {
		t.Error("RebootForRepair=true accepted")
	}
}
