package provider

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// invalidCase is a configuration the CRD refuses: attribute is the path the
// error must name, message a fragment of what it must say.
type invalidCase struct {
	name, config, attribute, message string
}

// nodePoolWith is a valid pool with one attribute replaced or added:
// override maps a top-level attribute to its HCL value.
func nodePoolWith(override map[string]string) string {
	attrs := map[string]string{
		"name":       `"invalid"`,
		"template":   templateWith(nil),
		"disruption": `{ consolidate_after = "1m" }`,
	}
	for k, v := range override {
		attrs[k] = v
	}
	return "resource \"joist_node_pool\" \"test\" {\n" + hclAttributes(attrs) + "}\n"
}

// templateWith is a valid template with spec attributes (and metadata) replaced.
func templateWith(override map[string]string) string {
	spec := map[string]string{
		"node_class_ref": `{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "default" }`,
		"requirements":   `[{ key = "kubernetes.io/arch", operator = "In", values = ["amd64"] }]`,
	}
	metadata := "{}"
	for k, v := range override {
		if k == "metadata" {
			metadata = v
			continue
		}
		spec[k] = v
	}
	return "{\n metadata = " + metadata + "\n spec = {\n" + hclAttributes(spec) + "}\n}"
}

func requirement(r string) map[string]string {
	return map[string]string{"requirements": "[" + r + "]"}
}

func nodeClassWith(override map[string]string) string {
	attrs := map[string]string{
		"name":                          `"invalid"`,
		"role":                          `"KarpenterNodeRole-demo"`,
		"ami_selector_terms":            `[{ alias = "al2023@latest" }]`,
		"subnet_selector_terms":         `[{ tags = { "karpenter.sh/discovery" = "demo" } }]`,
		"security_group_selector_terms": `[{ tags = { "karpenter.sh/discovery" = "demo" } }]`,
	}
	for k, v := range override {
		if v == "" {
			delete(attrs, k)
			continue
		}
		attrs[k] = v
	}
	return "resource \"joist_ec2_node_class\" \"test\" {\n" + hclAttributes(attrs) + "}\n"
}

func hclAttributes(attrs map[string]string) string {
	var b strings.Builder
	for k, v := range attrs {
		fmt.Fprintf(&b, "  %s = %s\n", k, v)
	}
	return b.String()
}

var invalidCases = []invalidCase{
	// NodePool.
	{"weight zero", nodePoolWith(map[string]string{"weight": "0"}), `weight`, "greater than or equal to 1"},
	{"weight 101", nodePoolWith(map[string]string{"weight": "101"}), `weight`, "less than or equal to 100"},
	{"unknown operator", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "Maybe", values = ["a"] }`))}), `template.spec.requirements[0].operator`, "not supported"},
	{"In without values", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "In", values = [] }`))}), `template.spec.requirements`, "must have a value defined"},
	{"Gt with two values", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.k8s.aws/instance-cpu", operator = "Gt", values = ["2", "4"] }`))}), `template.spec.requirements`, "single positive integer"},
	{"Lt not a number", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.k8s.aws/instance-cpu", operator = "Lt", values = ["many"] }`))}), `template.spec.requirements`, "single positive integer"},
	{"Gte decimal", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.k8s.aws/instance-cpu", operator = "Gte", values = ["1.5"] }`))}), `template.spec.requirements`, "single positive integer"},
	{"minValues zero", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "Exists", min_values = 0 }`))}), `template.spec.requirements[0].min_values`, "greater than or equal to 1"},
	{"minValues 51", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "Exists", min_values = 51 }`))}), `template.spec.requirements[0].min_values`, "less than or equal to 50"},
	{"minValues over values", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "In", values = ["a", "b"], min_values = 3 }`))}), `template.spec.requirements`, "at least that many values"},
	{"hostname requirement", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "kubernetes.io/hostname", operator = "Exists" }`))}), `template.spec.requirements[0].key`, "restricted"},
	{"nodepool requirement", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.sh/nodepool", operator = "Exists" }`))}), `template.spec.requirements[0].key`, "karpenter.sh/nodepool"},
	{"karpenter.sh requirement", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.sh/foo", operator = "Exists" }`))}), `template.spec.requirements[0].key`, "restricted"},
	{"aws domain requirement", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "karpenter.k8s.aws/instance-pods", operator = "Exists" }`))}), `template.spec.requirements[0].key`, "restricted"},
	{"malformed key", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "bad key!", operator = "Exists" }`))}), `template.spec.requirements[0].key`, "does not match"},
	{"value too long", nodePoolWith(map[string]string{"template": templateWith(requirement(`{ key = "a.example.com/x", operator = "In", values = ["` + strings.Repeat("v", 64) + `"] }`))}), `template.spec.requirements[0].values[0]`, "longer than 63"},
	{"nodepool label", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"metadata": `{ labels = { "karpenter.sh/nodepool" = "x" } }`})}), `template.metadata.labels`, "restricted"},
	{"label value", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"metadata": `{ labels = { team = "a b" } }`})}), `template.metadata.labels["team"]`, "does not match"},
	{"taint effect", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"taints": `[{ key = "example.com/x", effect = "Sometimes" }]`})}), `template.spec.taints[0].effect`, "not supported"},
	{"taint key", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"taints": `[{ key = "bad key", effect = "NoSchedule" }]`})}), `template.spec.taints[0].key`, "does not match"},
	{"startup taint effect", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"startup_taints": `[{ key = "example.com/x", effect = "Later" }]`})}), `template.spec.startup_taints[0].effect`, "not supported"},
	{"expireAfter days", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"expire_after": `"30d"`})}), `template.spec.expire_after`, "does not match"},
	{"terminationGracePeriod Never", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"termination_grace_period": `"Never"`})}), `template.spec.termination_grace_period`, "does not match"},
	{"nodeClassRef group with version", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"node_class_ref": `{ group = "karpenter.k8s.aws/v1", kind = "EC2NodeClass", name = "default" }`})}), `template.spec.node_class_ref.group`, "does not match"},
	{"nodeClassRef empty name", nodePoolWith(map[string]string{"template": templateWith(map[string]string{"node_class_ref": `{ group = "karpenter.k8s.aws", kind = "EC2NodeClass", name = "" }`})}), `template.spec.node_class_ref.name`, "may not be empty"},
	{"consolidateAfter", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "soon" }`}), `disruption.consolidate_after`, "does not match"},
	{"consolidationPolicy", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", consolidation_policy = "WhenUnderutilized" }`}), `disruption.consolidation_policy`, "not supported"},
	{"budget over 100%", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", budgets = [{ nodes = "101%" }] }`}), `disruption.budgets[0].nodes`, "does not match"},
	{"budget schedule alone", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", budgets = [{ nodes = "1", schedule = "@daily" }] }`}), `disruption.budgets`, "must be set with 'duration'"},
	{"budget duration seconds", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", budgets = [{ nodes = "1", schedule = "@daily", duration = "30s" }] }`}), `disruption.budgets[0].duration`, "does not match"},
	{"budget reason", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", budgets = [{ nodes = "1", reasons = ["Expired"] }] }`}), `disruption.budgets[0].reasons[0]`, "not supported"},
	{"budget schedule syntax", nodePoolWith(map[string]string{"disruption": `{ consolidate_after = "1m", budgets = [{ nodes = "1", schedule = "daily", duration = "1h" }] }`}), `disruption.budgets[0].schedule`, "does not match"},
	{"limits quantity", nodePoolWith(map[string]string{"limits": `{ cpu = "lots" }`}), `limits["cpu"]`, "does not match"},
	{"pool name", nodePoolWith(map[string]string{"name": `"Bad_Name"`}), `name`, "not a valid name"},
	// EC2NodeClass.
	{"neither role nor profile", nodeClassWith(map[string]string{"role": ""}), ``, "exactly one of"},
	{"role and profile", nodeClassWith(map[string]string{"instance_profile": `"profile"`}), ``, "exactly one of"},
	{"empty role", nodeClassWith(map[string]string{"role": `""`}), `role`, "role cannot be empty"},
	{"amiFamily mismatch", nodeClassWith(map[string]string{"ami_family": `"Bottlerocket"`}), ``, "must be 'AL2023' or 'Custom' when using an AL2023 alias"},
	{"amiFamily required", nodeClassWith(map[string]string{"ami_selector_terms": `[{ id = "ami-0123" }]`}), ``, "must specify amiFamily"},
	{"alias family", nodeClassWith(map[string]string{"ami_selector_terms": `[{ alias = "ubuntu@latest" }]`}), `ami_selector_terms[0].alias`, "family is not supported"},
	{"windows alias pinned", nodeClassWith(map[string]string{"ami_selector_terms": `[{ alias = "windows2022@v1" }]`}), `ami_selector_terms[0].alias`, "only specify version 'latest'"},
	{"alias with another term", nodeClassWith(map[string]string{"ami_selector_terms": `[{ alias = "al2023@latest" }, { id = "ami-0123" }]`}), `ami_selector_terms`, "keep the alias term alone"},
	{"no ami terms", nodeClassWith(map[string]string{"ami_selector_terms": `[]`}), `ami_selector_terms`, "at least 1"},
	{"subnet id and tags", nodeClassWith(map[string]string{"subnet_selector_terms": `[{ id = "subnet-0123", tags = { a = "b" } }]`}), `subnet_selector_terms`, "mutually exclusive"},
	{"subnet id syntax", nodeClassWith(map[string]string{"subnet_selector_terms": `[{ id = "sub-123" }]`}), `subnet_selector_terms[0].id`, "does not match"},
	{"no subnet terms", nodeClassWith(map[string]string{"subnet_selector_terms": `[]`}), `subnet_selector_terms`, "cannot be empty"},
	{"empty subnet tag value", nodeClassWith(map[string]string{"subnet_selector_terms": `[{ tags = { a = "" } }]`}), `subnet_selector_terms[0].tags`, "empty tag keys or values"},
	{"empty security group term", nodeClassWith(map[string]string{"security_group_selector_terms": `[{}]`}), `security_group_selector_terms`, "expected at least one"},
	{"cluster tag", nodeClassWith(map[string]string{"tags": `{ "kubernetes.io/cluster/demo" = "owned" }`}), `tags`, "restricted tag"},
	{"gc thresholds", nodeClassWith(map[string]string{"kubelet": `{ imageGCHighThresholdPercent = "50", imageGCLowThresholdPercent = "60" }`}), `kubelet`, "must be greater than imageGCLowThresholdPercent"},
	{"eviction soft without grace", nodeClassWith(map[string]string{"kubelet": `{ evictionSoft = jsonencode({ "memory.available" = "500Mi" }) }`}), `kubelet`, "has no evictionSoftGracePeriod"},
	{"eviction signal", nodeClassWith(map[string]string{"kubelet": `{ evictionHard = jsonencode({ "memory.free" = "5%" }) }`}), `kubelet`, "not an eviction signal"},
	{"reserved key", nodeClassWith(map[string]string{"kubelet": `{ systemReserved = jsonencode({ gpu = "1" }) }`}), `kubelet`, "not a reservable resource"},
	{"reserved negative", nodeClassWith(map[string]string{"kubelet": `{ kubeReserved = jsonencode({ cpu = "-1" }) }`}), `kubelet`, "cannot be negative"},
	{"max pods negative", nodeClassWith(map[string]string{"kubelet": `{ maxPods = "-1" }`}), `kubelet`, "cannot be negative"},
	{"kubelet unknown field", nodeClassWith(map[string]string{"kubelet": `{ maxPod = "10" }`}), `kubelet`, "not a field of the kubelet's KubeletConfiguration"},
	{"two root volumes", nodeClassWith(map[string]string{"block_device_mappings": `[{ root_volume = true, ebs = { volume_size = "20Gi" } }, { root_volume = true, ebs = { volume_size = "20Gi" } }]`}), `block_device_mappings`, "only one blockDeviceMappings with rootVolume"},
	{"ebs without size", nodeClassWith(map[string]string{"block_device_mappings": `[{ device_name = "/dev/xvda", ebs = { volume_type = "gp3" } }]`}), `block_device_mappings[0].ebs`, "snapshotID or volumeSize"},
	{"ebs type", nodeClassWith(map[string]string{"block_device_mappings": `[{ ebs = { volume_size = "20Gi", volume_type = "gp9" } }]`}), `block_device_mappings[0].ebs.volume_type`, "not supported"},
	{"http tokens", nodeClassWith(map[string]string{"metadata_options": `{ http_tokens = "sometimes" }`}), `metadata_options.http_tokens`, "not supported"},
	{"hop limit", nodeClassWith(map[string]string{"metadata_options": `{ http_put_response_hop_limit = 65 }`}), `metadata_options.http_put_response_hop_limit`, "less than or equal to 64"},
	{"instance store policy", nodeClassWith(map[string]string{"instance_store_policy": `"RAID1"`}), `instance_store_policy`, "not supported"},
	{"reservation owner", nodeClassWith(map[string]string{"capacity_reservation_selector_terms": `[{ owner_id = "123", tags = { a = "b" } }]`}), `capacity_reservation_selector_terms[0].owner_id`, "does not match"},
	{"placement group name and id", nodeClassWith(map[string]string{"placement_group_selector": `{ name = "hpc", id = "pg-0123" }`}), `placement_group_selector`, "'name' and 'id' are mutually exclusive"},
	{"placement group empty", nodeClassWith(map[string]string{"placement_group_selector": `{}`}), `placement_group_selector`, "expected at least one, got none"},
	{"placement group id", nodeClassWith(map[string]string{"placement_group_selector": `{ id = "group-1" }`}), `placement_group_selector.id`, "does not match"},
}

// TestAccInvalidConfigurationsFailAtPlan plans every invalid configuration
// against a provider whose Kubernetes API refuses and counts every request:
// each plan must fail naming the attribute, and none may reach the cluster.
func TestAccInvalidConfigurationsFailAtPlan(t *testing.T) {
	t.Parallel()
	if len(invalidCases) < 40 {
		t.Fatalf("only %d invalid configurations", len(invalidCases))
	}
	var requests atomic.Int64
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		t.Errorf("the cluster was called during plan: %s %s", r.Method, r.URL)
		http.Error(w, "refused", http.StatusServiceUnavailable)
	}))
	defer refuse.Close()
	provider := fmt.Sprintf(`
provider "joist" {
  kubernetes = {
    host  = %q
    token = "plan-only"
  }
}
`, refuse.URL)
	// One case per subtest, so a run reports every case that fails.
	for _, c := range invalidCases {
		t.Run(c.name, func(t *testing.T) {
			resource.UnitTest(t, resource.TestCase{ProtoV6ProviderFactories: testAccProtoV6ProviderFactories, Steps: []resource.TestStep{{
				Config:      provider + c.config,
				PlanOnly:    true,
				ExpectError: errorNaming(c.attribute, c.message),
			}}})
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests reached the cluster while planning invalid configurations", n)
	}
}

// errorNaming matches a diagnostic whose detail starts with the attribute
// path and contains the message, allowing for Terraform's line wrapping.
func errorNaming(attribute, message string) *regexp.Regexp {
	words := strings.Fields(regexp.QuoteMeta(message))
	return regexp.MustCompile(`Invalid joist_[a-z0-9_]+[\s\S]*` + regexp.QuoteMeta(attribute) + `:[\s\S]*` + strings.Join(words, `\s+`))
}
