package aws_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestLaunchedUserDataPerFamily launches one claim per AMI family and reads
// back the user data EC2 received from the launch template.
func TestLaunchedUserDataPerFamily(t *testing.T) {
	ctx := testContext(t)
	for _, family := range []string{"al2023", "al2", "bottlerocket"} {
		t.Run(family, func(t *testing.T) {
			nc := testenv.NodeClass("ud-"+family, cluster, family+"@latest")
			custom := map[string]string{
				"al2023":       "#!/bin/bash\necho custom-al2023\n",
				"al2":          "#!/bin/bash\necho custom-al2\n",
				"bottlerocket": "[settings.host-containers.admin]\nenabled = true\n",
			}[family]
			nc.Spec.UserData = &custom
			nc = readyNodeClass(t, prov, nc)
			claim := testenv.NodeClaim("ud-"+family, "general", nc.Name,
				testenv.In(corev1.LabelInstanceTypeStable, "m5.large"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
			claim.Labels["team"] = "a"
			claim.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
			got, err := prov.Create(ctx, claim)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = prov.Delete(ctx, got) })
			id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
			_, ud, ok := sim.EC2.Instance(id)
			if !ok {
				t.Fatalf("instance %s not in the simulator", id)
			}
			labels, taints, maxPods := parseUserData(t, family, ud)
			if labels[v1.NodePoolLabelKey] != "general" || labels["team"] != "a" {
				t.Errorf("node labels = %v, want the claim's labels", labels)
			}
			for _, want := range []string{"karpenter.sh/unregistered:NoExecute", "dedicated=batch:NoSchedule"} {
				if !strings.Contains(taints, want) {
					t.Errorf("taints %q lack %q", taints, want)
				}
			}
			if maxPods != "29" {
				t.Errorf("max pods = %q, want m5.large's ENI-limited 29", maxPods)
			}
			if !strings.Contains(ud, strings.TrimSpace(strings.SplitN(custom, "\n", 2)[1])) && family != "bottlerocket" {
				t.Errorf("custom user data was dropped:\n%s", ud)
			}
		})
	}
}

// parseUserData returns the node labels, the taints (as one string) and
// max pods a node would register with.
func parseUserData(t *testing.T, family, ud string) (map[string]string, string, string) {
	t.Helper()
	labels := map[string]string{}
	switch family {
	case "bottlerocket":
		var doc struct {
			Settings struct {
				HostContainers map[string]map[string]any `toml:"host-containers"`
				Kubernetes     struct {
					Labels  map[string]string   `toml:"node-labels"`
					Taints  map[string][]string `toml:"node-taints"`
					MaxPods int                 `toml:"max-pods"`
				} `toml:"kubernetes"`
			} `toml:"settings"`
		}
		if _, err := toml.Decode(ud, &doc); err != nil {
			t.Fatalf("Bottlerocket user data is not TOML: %v\n%s", err, ud)
		}
		if doc.Settings.HostContainers["admin"]["enabled"] != true {
			t.Errorf("the node class's settings were dropped:\n%s", ud)
		}
		var taints []string
		for k, vs := range doc.Settings.Kubernetes.Taints {
			for _, v := range vs {
				value, effect, _ := strings.Cut(v, ":")
				if value == "" {
					taints = append(taints, k+":"+effect)
				} else {
					taints = append(taints, k+"="+value+":"+effect)
				}
			}
		}
		return doc.Settings.Kubernetes.Labels, strings.Join(taints, ","), itoa(doc.Settings.Kubernetes.MaxPods)
	}
	parts, err := userdata.ParseMIME(ud)
	if err != nil {
		t.Fatalf("%s user data is not MIME: %v\n%s", family, err, ud)
	}
	last := parts[len(parts)-1]
	var flags []string
	maxPods := ""
	if family == "al2023" {
		var nc userdata.NodeConfig
		if err := yaml.Unmarshal([]byte(last.Body), &nc); err != nil {
			t.Fatalf("NodeConfig does not parse: %v", err)
		}
		flags = nc.Spec.Kubelet.Flags
		if v, ok := nc.Spec.Kubelet.Config["maxPods"].(float64); ok {
			maxPods = itoa(int(v))
		}
	} else {
		i := strings.Index(last.Body, "--kubelet-extra-args '")
		if i < 0 {
			t.Fatalf("no --kubelet-extra-args in\n%s", last.Body)
		}
		args := last.Body[i+len("--kubelet-extra-args '"):]
		flags = strings.Fields(args[:strings.Index(args, "'")])
	}
	taints := ""
	for _, f := range flags {
		switch {
		case strings.HasPrefix(f, "--node-labels="):
			for _, kv := range strings.Split(strings.TrimPrefix(f, "--node-labels="), ",") {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = v
			}
		case strings.HasPrefix(f, "--register-with-taints="):
			taints = strings.TrimPrefix(f, "--register-with-taints=")
		case strings.HasPrefix(f, "--max-pods="):
			maxPods = strings.TrimPrefix(f, "--max-pods=")
		}
	}
	return labels, taints, maxPods
}

func itoa(n int) string { return strconv.Itoa(n) }
