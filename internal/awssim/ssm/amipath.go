package ssm

import (
	"fmt"
	"strings"
)

// AMIParameters returns the public parameter names under which EKS publishes
// an optimized image release: the family's "recommended"/"latest" alias and
// the release's own version path, for Kubernetes version k8s.
//
// family is al2023, al2, bottlerocket or windows2019/2022/2025; arch x86_64 or arm64; variant
// standard, nvidia or (AL2023 only) neuron; name is the image name (AL2 and AL2023 version paths
// use it) and version the release version (v20261101, or 1.50.0 for
// Bottlerocket).
func AMIParameters(k8s, family, arch, variant, name, version string) ([]string, error) {
	if variant == "neuron" && family != "al2023" {
		return nil, fmt.Errorf("EKS publishes Neuron images for al2023 only, not %s", family)
	}
	switch family {
	case "al2023":
		base := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/", k8s, arch, variant)
		return []string{base + "recommended/image_id", base + name + "/image_id"}, nil
	case "al2":
		suffix := ""
		switch {
		case variant == "nvidia":
			suffix = "-gpu"
		case arch == "arm64":
			suffix = "-arm64"
		}
		base := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2%s/", k8s, suffix)
		return []string{base + "recommended/image_id", base + name + "/image_id"}, nil
	case "bottlerocket":
		flavour := ""
		if variant == "nvidia" {
			flavour = "-nvidia"
		}
		base := fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s%s/%s/", k8s, flavour, arch)
		return []string{base + "latest/image_id", base + version + "/image_id", base + "v" + version + "/image_id"}, nil
	case "windows2019", "windows2022", "windows2025":
		// Windows images are published under their "latest" name only.
		return []string{fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", strings.TrimPrefix(family, "windows"), k8s)}, nil
	}
	return nil, fmt.Errorf("AMI family %q has no SSM parameters: use al2023, al2, bottlerocket or windows2019/2022/2025", family)
}
