package awsv1

import (
	"os"
	"path/filepath"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func ptr[T any](v T) *T { return &v }

func hashTestNodeClass() *EC2NodeClass {
	return &EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: EC2NodeClassSpec{
			SubnetSelectorTerms:        []SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			SecurityGroupSelectorTerms: []SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": "demo"}}},
			AMISelectorTerms:           []AMISelectorTerm{{Alias: "al2023@latest"}},
			Role:                       "KarpenterNodeRole-demo",
			UserData:                   ptr("#!/bin/bash\necho hi\n"),
			Tags:                       map[string]string{"team": "a", "env": "prod"},
			Kubelet:                    KubeletConfigurationOf(KubeletSettings{MaxPods: ptr[int32](110)}),
			BlockDeviceMappings: []*BlockDeviceMapping{{
				DeviceName: ptr("/dev/xvda"),
				RootVolume: true,
				EBS:        &BlockDevice{VolumeSize: ptr(resource.MustParse("20Gi")), VolumeType: ptr("gp3"), Encrypted: ptr(true)},
			}},
			MetadataOptions: &MetadataOptions{HTTPEndpoint: ptr("enabled"), HTTPTokens: ptr("required"), HTTPPutResponseHopLimit: ptr[int64](1), HTTPProtocolIPv6: ptr("disabled")},
		},
	}
}

// upstreamHashes are the hashes Karpenter v1.15 computes of the fixtures in
// ../testdata/hash (see its README for how they were produced).
type upstreamHashes struct {
	EC2NodeClassHashVersion string `json:"ec2NodeClassHashVersion"`
	CABundle                string `json:"caBundle"`
	EC2NodeClasses          map[string]struct {
		NoCABundle string `json:"noCABundle"`
		CABundle   string `json:"caBundle"`
	} `json:"ec2NodeClasses"`
}

// TestEC2NodeClassHashIsKarpenters checks that the EC2NodeClass hash and its
// version are Karpenter's, with and without a cluster CA bundle, so
// karpenter.k8s.aws/ec2nodeclass-hash means the same to both.
func TestEC2NodeClassHashIsKarpenters(t *testing.T) {
	var want upstreamHashes
	readFixture(t, "upstream.json", &want)
	var classes []EC2NodeClass
	readFixture(t, "ec2nodeclasses.yaml", &classes)
	if EC2NodeClassHashVersion != want.EC2NodeClassHashVersion {
		t.Errorf("EC2NodeClassHashVersion = %s, Karpenter's is %s", EC2NodeClassHashVersion, want.EC2NodeClassHashVersion)
	}
	if len(classes) != len(want.EC2NodeClasses) {
		t.Fatalf("%d fixtures, %d upstream hashes", len(classes), len(want.EC2NodeClasses))
	}
	for i := range classes {
		nc, w := &classes[i], want.EC2NodeClasses[classes[i].Name]
		if got := nc.Hash(""); got != w.NoCABundle {
			t.Errorf("EC2NodeClass %s: hash %s, Karpenter's is %s", nc.Name, got, w.NoCABundle)
		}
		if got := nc.Hash(want.CABundle); got != w.CABundle {
			t.Errorf("EC2NodeClass %s with a CA bundle: hash %s, Karpenter's is %s", nc.Name, got, w.CABundle)
		}
	}
}

// readFixture decodes a fixture; objects strictly, so a field Joist's types
// lack fails the test rather than hashing as absent.
func readFixture(t *testing.T, name string, into any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "hash", name))
	if err != nil {
		t.Fatal(err)
	}
	decode := yaml.UnmarshalStrict
	if filepath.Ext(name) == ".json" {
		decode = yaml.Unmarshal
	}
	if err := decode(raw, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func TestEC2NodeClassHashTracksCABundle(t *testing.T) {
	if hashTestNodeClass().Hash("") == hashTestNodeClass().Hash("Y2E=") {
		t.Fatal("a new cluster CA bundle kept the hash: nodes joined with the old CA would not drift")
	}
}

func TestEC2NodeClassHashIgnoresSelectorsAndResolvedFamily(t *testing.T) {
	base := hashTestNodeClass().Hash("")
	for name, mutate := range map[string]func(*EC2NodeClass){
		"subnet selector": func(nc *EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []SubnetSelectorTerm{{ID: "subnet-123"}} },
		"security group selector": func(nc *EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []SecurityGroupSelectorTerm{{Name: "nodes"}}
		},
		"capacity reservations": func(nc *EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []CapacityReservationSelectorTerm{{ID: "cr-1"}}
		},
		"ami selector":        func(nc *EC2NodeClass) { nc.Spec.AMISelectorTerms = []AMISelectorTerm{{Alias: "al2023@v20240807"}} },
		"amiFamily spelt out": func(nc *EC2NodeClass) { nc.Spec.AMIFamily = ptr(AMIFamilyAL2023) },
		"ipPrefixCount":       func(nc *EC2NodeClass) { nc.Spec.IPPrefixCount = ptr[int32](2) },
		"status":              func(nc *EC2NodeClass) { nc.Status.InstanceProfile = "profile" },
		"volume size respelt": func(nc *EC2NodeClass) {
			nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = ptr(resource.MustParse("20480Mi"))
		},
	} {
		nc := hashTestNodeClass()
		mutate(nc)
		if got := nc.Hash(""); got != base {
			t.Errorf("changing %s changed the hash", name)
		}
	}
}

func TestEC2NodeClassHashTracksLaunchSettings(t *testing.T) {
	base := hashTestNodeClass().Hash("")
	for name, mutate := range map[string]func(*EC2NodeClass){
		"family via amiFamily": func(nc *EC2NodeClass) { nc.Spec.AMIFamily = ptr(AMIFamilyCustom) },
		"family via alias":     func(nc *EC2NodeClass) { nc.Spec.AMISelectorTerms = []AMISelectorTerm{{Alias: "bottlerocket@latest"}} },
		"userData":             func(nc *EC2NodeClass) { nc.Spec.UserData = ptr("#!/bin/bash\n") },
		"tags":                 func(nc *EC2NodeClass) { nc.Spec.Tags["team"] = "b" },
		"role":                 func(nc *EC2NodeClass) { nc.Spec.Role = "other" },
		"kubelet":              func(nc *EC2NodeClass) { nc.Spec.Kubelet["maxPods"] = apiextensionsv1.JSON{Raw: []byte("58")} },
		"volume size": func(nc *EC2NodeClass) {
			nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = ptr(resource.MustParse("30Gi"))
		},
		"metadata hop limit": func(nc *EC2NodeClass) { nc.Spec.MetadataOptions.HTTPPutResponseHopLimit = ptr[int64](2) },
		"detailedMonitoring": func(nc *EC2NodeClass) { nc.Spec.DetailedMonitoring = ptr(true) },
		"public IP":          func(nc *EC2NodeClass) { nc.Spec.AssociatePublicIPAddress = ptr(true) },
		"instance store":     func(nc *EC2NodeClass) { nc.Spec.InstanceStorePolicy = ptr(InstanceStorePolicyRAID0) },
	} {
		nc := hashTestNodeClass()
		mutate(nc)
		if got := nc.Hash(""); got == base {
			t.Errorf("changing %s kept the hash", name)
		}
	}
}

func TestParseAlias(t *testing.T) {
	for in, want := range map[string]Alias{
		"al2023@latest":      {AMIFamilyAL2023, "latest"},
		"al2@v20240807":      {AMIFamilyAL2, "v20240807"},
		"bottlerocket@1.2.0": {AMIFamilyBottlerocket, "1.2.0"},
		"windows2025@latest": {AMIFamilyWindows2025, "latest"},
	} {
		got, ok := ParseAlias(in)
		if !ok || got != want || got.String() != in {
			t.Errorf("ParseAlias(%q) = %+v, %v; want %+v", in, got, ok, want)
		}
	}
	for _, in := range []string{"ubuntu@latest", "al2023", "al2023@", "AL2023@latest"} {
		if got, ok := ParseAlias(in); ok {
			t.Errorf("ParseAlias(%q) = %+v, want not ok", in, got)
		}
	}
}

func TestAMIFamily(t *testing.T) {
	nc := hashTestNodeClass()
	if got := nc.AMIFamily(); got != AMIFamilyAL2023 {
		t.Errorf("alias al2023@latest: AMIFamily() = %s", got)
	}
	nc.Spec.AMIFamily = ptr(AMIFamilyCustom)
	if got := nc.AMIFamily(); got != AMIFamilyCustom {
		t.Errorf("amiFamily Custom with an alias: AMIFamily() = %s", got)
	}
}

// TestKubeletHashIgnoresLayout checks that the kubelet configuration is
// hashed as compact JSON with sorted keys, as Karpenter hashes it: layout
// does not drift nodes, a new field does.
func TestKubeletHashIgnoresLayout(t *testing.T) {
	a, b := hashTestNodeClass(), hashTestNodeClass()
	a.Spec.Kubelet = KubeletConfiguration{
		"maxPods":      apiextensionsv1.JSON{Raw: []byte(`110`)},
		"kubeReserved": apiextensionsv1.JSON{Raw: []byte(`{"cpu":"100m","memory":"1Gi"}`)},
	}
	b.Spec.Kubelet = KubeletConfiguration{
		"kubeReserved": apiextensionsv1.JSON{Raw: []byte(`{ "cpu": "100m",  "memory": "1Gi" }`)},
		"maxPods":      apiextensionsv1.JSON{Raw: []byte(` 110 `)},
	}
	if a.Hash("") != b.Hash("") {
		t.Fatalf("the same kubelet configuration hashes differently: %s and %s", a.Hash(""), b.Hash(""))
	}
	b.Spec.Kubelet["cpuManagerPolicy"] = apiextensionsv1.JSON{Raw: []byte(`"static"`)}
	if a.Hash("") == b.Hash("") {
		t.Fatal("adding a kubelet field does not change the hash")
	}
}
