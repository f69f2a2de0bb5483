package userdata

import (
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

func ptr[T any](v T) *T { return &v }

func testOptions(custom *string) Options {
	return Options{
		ClusterName: "demo", ClusterEndpoint: "https://demo.example:6443", CABundle: "Q0EK", ClusterCIDR: "10.100.0.0/16",
		Kubelet: awsv1.KubeletConfigurationOf(awsv1.KubeletSettings{MaxPods: ptr[int32](29), ClusterDNS: []string{"10.100.0.10"}, KubeReserved: map[string]string{"cpu": "100m"}}),
		Labels:  map[string]string{v1.NodePoolLabelKey: "default", "team": "a"},
		Taints:  []corev1.Taint{v1.UnregisteredNoExecuteTaint, {Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}},
		Custom:  custom,
	}
}

func TestAL2023NodeConfigCarriesLabelsTaintsAndUserParts(t *testing.T) {
	out, err := AL2023(testOptions(ptr("#!/bin/bash\necho user-part\n")))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := ParseMIME(out)
	if err != nil {
		t.Fatalf("generated user data does not parse as MIME: %v\n%s", err, out)
	}
	if len(parts) != 2 || parts[0].ContentType != ContentTypeShell || !strings.Contains(parts[0].Body, "echo user-part") {
		t.Fatalf("want the user's shell part first, got %+v", parts)
	}
	if parts[1].ContentType != ContentTypeNodeConfig {
		t.Fatalf("last part is %s, want the NodeConfig", parts[1].ContentType)
	}
	var nc NodeConfig
	if err := yaml.Unmarshal([]byte(parts[1].Body), &nc); err != nil {
		t.Fatal(err)
	}
	if nc.Spec.Cluster.Name != "demo" || nc.Spec.Cluster.CIDR != "10.100.0.0/16" || nc.Spec.Cluster.APIServerEndpoint != "https://demo.example:6443" {
		t.Errorf("cluster details = %+v", nc.Spec.Cluster)
	}
	if got := nc.Spec.Kubelet.Config["maxPods"]; got != float64(29) {
		t.Errorf("maxPods = %v, want 29", got)
	}
	flags := strings.Join(nc.Spec.Kubelet.Flags, " ")
	for _, want := range []string{"--node-labels=karpenter.sh/nodepool=default,team=a", "--register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule"} {
		if !strings.Contains(flags, want) {
			t.Errorf("flags %q lack %q", flags, want)
		}
	}
}

func TestAL2023KeepsUserMIMEPartsAndNodeConfig(t *testing.T) {
	user := WriteMIME([]Part{{ContentType: ContentTypeNodeConfig, Body: "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    config:\n      shutdownGracePeriod: 30s\n"}, {ContentType: ContentTypeShell, Body: "#!/bin/bash\ntrue\n"}})
	out, err := AL2023(testOptions(&user))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := ParseMIME(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 3 || !strings.Contains(parts[0].Body, "shutdownGracePeriod") || parts[1].ContentType != ContentTypeShell || parts[2].ContentType != ContentTypeNodeConfig {
		t.Fatalf("parts = %+v", parts)
	}
}

func TestAL2023NeedsClusterCIDR(t *testing.T) {
	o := testOptions(nil)
	o.ClusterCIDR = ""
	if _, err := AL2023(o); err == nil || !strings.Contains(err.Error(), "CIDR") {
		t.Fatalf("err = %v, want one naming the missing CIDR", err)
	}
}

func TestAL2BootstrapCarriesKubeletExtraArgs(t *testing.T) {
	out, err := AL2(testOptions(ptr("#!/bin/bash\necho mine\n")))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := ParseMIME(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || !strings.Contains(parts[0].Body, "echo mine") {
		t.Fatalf("parts = %+v", parts)
	}
	script := parts[1].Body
	for _, want := range []string{
		"/etc/eks/bootstrap.sh 'demo' --apiserver-endpoint 'https://demo.example:6443' --b64-cluster-ca 'Q0EK'",
		"--dns-cluster-ip '10.100.0.10'", "--use-max-pods false",
		"--kubelet-extra-args '--node-labels=karpenter.sh/nodepool=default,team=a --register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule --max-pods=29 --kube-reserved=cpu=100m'",
	} {
		if !strings.Contains(script, want) {
			t.Errorf("bootstrap script lacks %q:\n%s", want, script)
		}
	}
}

func TestBottlerocketMergesOverUserSettings(t *testing.T) {
	user := "[settings.kubernetes]\ncluster-name = \"wrong\"\nallowed-unsafe-sysctls = [\"net.core.somaxconn\"]\n[settings.kubernetes.node-labels]\nmine = \"yes\"\n[settings.host-containers.admin]\nenabled = true\n"
	out, err := Bottlerocket(testOptions(&user))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Settings struct {
			Kubernetes struct {
				ClusterName string              `toml:"cluster-name"`
				APIServer   string              `toml:"api-server"`
				MaxPods     int                 `toml:"max-pods"`
				Labels      map[string]string   `toml:"node-labels"`
				Taints      map[string][]string `toml:"node-taints"`
				Sysctls     []string            `toml:"allowed-unsafe-sysctls"`
			} `toml:"kubernetes"`
			HostContainers map[string]map[string]any `toml:"host-containers"`
		} `toml:"settings"`
	}
	if _, err := toml.Decode(out, &doc); err != nil {
		t.Fatalf("generated TOML does not parse: %v\n%s", err, out)
	}
	k := doc.Settings.Kubernetes
	if k.ClusterName != "demo" || k.APIServer != "https://demo.example:6443" || k.MaxPods != 29 {
		t.Errorf("cluster settings = %+v", k)
	}
	if k.Labels["mine"] != "yes" || k.Labels[v1.NodePoolLabelKey] != "default" {
		t.Errorf("node-labels = %v", k.Labels)
	}
	if got := k.Taints[v1.UnregisteredTaintKey]; len(got) != 1 || got[0] != ":NoExecute" {
		t.Errorf("unregistered taint = %v", got)
	}
	if got := k.Taints["dedicated"]; len(got) != 1 || got[0] != "gpu:NoSchedule" {
		t.Errorf("dedicated taint = %v", got)
	}
	if len(k.Sysctls) != 1 || doc.Settings.HostContainers["admin"]["enabled"] != true {
		t.Errorf("user settings were dropped:\n%s", out)
	}
}

func TestCustomPassesUserDataThrough(t *testing.T) {
	out, err := Generate(awsv1.AMIFamilyCustom, testOptions(ptr("#!/bin/bash\nmy-bootstrap\n")))
	if err != nil || out != "#!/bin/bash\nmy-bootstrap\n" {
		t.Fatalf("Custom user data = %q, %v", out, err)
	}
}

// ipv6Options are testOptions for an IPv6 cluster: an IPv6 service range
// and the kube-dns address from it.
func ipv6Options() Options {
	o := testOptions(nil)
	o.IPv6, o.ClusterCIDR = true, "fd5e:9a41:77c3::/108"
	o.Kubelet = awsv1.KubeletConfigurationOf(awsv1.KubeletSettings{MaxPods: ptr[int32](110), ClusterDNS: []string{"fd5e:9a41:77c3::a"}})
	return o
}

func TestIPv6UserDataPerFamily(t *testing.T) {
	t.Run("AL2023", func(t *testing.T) {
		out, err := AL2023(ipv6Options())
		if err != nil {
			t.Fatal(err)
		}
		parts, err := ParseMIME(out)
		if err != nil {
			t.Fatal(err)
		}
		var nc NodeConfig
		if err := yaml.Unmarshal([]byte(parts[len(parts)-1].Body), &nc); err != nil {
			t.Fatal(err)
		}
		if nc.Spec.Cluster.CIDR != "fd5e:9a41:77c3::/108" {
			t.Errorf("NodeConfig cidr = %q, want the IPv6 service range", nc.Spec.Cluster.CIDR)
		}
		if dns, _ := nc.Spec.Kubelet.Config["clusterDNS"].([]any); len(dns) != 1 || dns[0] != "fd5e:9a41:77c3::a" {
			t.Errorf("kubelet clusterDNS = %v, want [fd5e:9a41:77c3::a]", nc.Spec.Kubelet.Config["clusterDNS"])
		}
	})
	t.Run("AL2", func(t *testing.T) {
		out, err := AL2(ipv6Options())
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"--ip-family ipv6", "--service-ipv6-cidr 'fd5e:9a41:77c3::/108'", "--dns-cluster-ip 'fd5e:9a41:77c3::a'"} {
			if !strings.Contains(out, want) {
				t.Errorf("bootstrap.sh call lacks %q:\n%s", want, out)
			}
		}
		v4, err := AL2(testOptions(nil))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(v4, "--ip-family") || strings.Contains(v4, "--service-ipv6-cidr") {
			t.Errorf("IPv4 bootstrap.sh call names an IP family:\n%s", v4)
		}
	})
	t.Run("Bottlerocket", func(t *testing.T) {
		out, err := Bottlerocket(ipv6Options())
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Settings struct {
				Kubernetes struct {
					DNS string `toml:"cluster-dns-ip"`
				} `toml:"kubernetes"`
			} `toml:"settings"`
		}
		if _, err := toml.Decode(out, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Settings.Kubernetes.DNS != "fd5e:9a41:77c3::a" {
			t.Errorf("cluster-dns-ip = %q, want the IPv6 kube-dns address", doc.Settings.Kubernetes.DNS)
		}
	})
	t.Run("Windows", func(t *testing.T) {
		// EKS has no IPv6 Windows nodes (the provider refuses the pair);
		// the script still carries whatever cluster DNS it is given.
		out := Windows(ipv6Options())
		if !strings.Contains(out, "-DNSClusterIP 'fd5e:9a41:77c3::a'") {
			t.Errorf("Start-EKSBootstrap.ps1 call lacks the DNS address:\n%s", out)
		}
	})
}

// TestBottlerocketRAID0MountsInstanceStorage checks instanceStorePolicy
// RAID0 on Bottlerocket, as Karpenter renders it: an essential bootstrap
// command, run on every boot, that builds the ephemeral volume from the
// instance store and binds the kubelet's and containerd's directories to
// it, beside the user's own bootstrap commands.
func TestBottlerocketRAID0MountsInstanceStorage(t *testing.T) {
	user := "[settings.bootstrap-commands.mine]\ncommands = [[\"echo\", \"hi\"]]\nmode = \"once\"\nessential = false\n"
	o := testOptions(&user)
	o.RAID0 = true
	out, err := Bottlerocket(o)
	if err != nil {
		t.Fatal(err)
	}
	type command struct {
		Commands  [][]string `toml:"commands"`
		Mode      string     `toml:"mode"`
		Essential bool       `toml:"essential"`
	}
	var doc struct {
		Settings struct {
			BootstrapCommands map[string]command `toml:"bootstrap-commands"`
		} `toml:"settings"`
	}
	if _, err := toml.Decode(out, &doc); err != nil {
		t.Fatalf("generated TOML does not parse: %v\n%s", err, out)
	}
	got := doc.Settings.BootstrapCommands["000-mount-instance-storage"]
	want := [][]string{
		{"apiclient", "ephemeral-storage", "init"},
		{"apiclient", "ephemeral-storage", "bind", "--dirs", "/var/lib/containerd", "/var/lib/kubelet", "/var/log/pods"},
	}
	if fmt.Sprint(got.Commands) != fmt.Sprint(want) || got.Mode != "always" || !got.Essential {
		t.Errorf("instance storage bootstrap command = %+v\n%s", got, out)
	}
	if _, ok := doc.Settings.BootstrapCommands["mine"]; !ok {
		t.Errorf("the user's bootstrap command was dropped:\n%s", out)
	}
	o.RAID0 = false
	if out, _ := Bottlerocket(o); strings.Contains(out, "ephemeral-storage") {
		t.Errorf("instance storage mounted without RAID0:\n%s", out)
	}
}
