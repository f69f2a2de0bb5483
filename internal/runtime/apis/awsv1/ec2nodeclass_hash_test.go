package awsv1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// TestEC2NodeClassHashIsStable pins the digest of a fixed EC2NodeClass. If it
// fails, bump EC2NodeClassHashVersion and update the value.
func TestEC2NodeClassHashIsStable(t *testing.T) {
	const want = "11791470907013285140"
	if got := hashTestNodeClass().Hash(); got != want {
		t.Fatalf("EC2NodeClass hash changed to %s (version %s): bump EC2NodeClassHashVersion and update this test", got, EC2NodeClassHashVersion)
	}
}

func TestEC2NodeClassHashIgnoresSelectorsAndResolvedFamily(t *testing.T) {
	base := hashTestNodeClass().Hash()
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
		if got := nc.Hash(); got != base {
			t.Errorf("changing %s changed the hash", name)
		}
	}
}

func TestEC2NodeClassHashTracksLaunchSettings(t *testing.T) {
	base := hashTestNodeClass().Hash()
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
		if got := nc.Hash(); got == base {
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

// TestKubeletHashIgnoresSpelling checks that the kubelet configuration is
// hashed by meaning: key order and number spelling do not drift nodes.
func TestKubeletHashIgnoresSpelling(t *testing.T) {
	a, b := hashTestNodeClass(), hashTestNodeClass()
	a.Spec.Kubelet = KubeletConfiguration{
		"maxPods":      apiextensionsv1.JSON{Raw: []byte(`110`)},
		"kubeReserved": apiextensionsv1.JSON{Raw: []byte(`{"cpu":"100m","memory":"1Gi"}`)},
	}
	b.Spec.Kubelet = KubeletConfiguration{
		"maxPods":      apiextensionsv1.JSON{Raw: []byte(`110.0`)},
		"kubeReserved": apiextensionsv1.JSON{Raw: []byte(`{ "memory": "1Gi", "cpu": "100m" }`)},
	}
	if a.Hash() != b.Hash() {
		t.Fatalf("the same kubelet configuration hashes differently: %s and %s", a.Hash(), b.Hash())
	}
	b.Spec.Kubelet["cpuManagerPolicy"] = apiextensionsv1.JSON{Raw: []byte(`"static"`)}
	if a.Hash() == b.Hash() {
		t.Fatal("adding a kubelet field does not change the hash")
	}
}
