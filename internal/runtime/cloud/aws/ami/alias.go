package ami

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// variant is one image flavour an alias resolves: an SSM parameter and the
// requirements of the instance types that image serves.
type variant struct {
	Parameter    string
	Requirements []corev1.NodeSelectorRequirement
}

func archReq(arch string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{arch}}
}

func exists(key string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists}
}

func absent(key string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpDoesNotExist}
}

// plain is for images without GPU or accelerator drivers.
func plain(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archReq(arch), absent(v1.LabelInstanceGPUCount), absent(v1.LabelInstanceAcceleratorCount)}
}

func gpu(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archReq(arch), exists(v1.LabelInstanceGPUCount)}
}

func accelerator(arch string) []corev1.NodeSelectorRequirement {
	return []corev1.NodeSelectorRequirement{archReq(arch), exists(v1.LabelInstanceAcceleratorCount)}
}

// ssmArch is the architecture spelling of EKS parameter paths.
var ssmArch = map[string]string{v1.ArchitectureAmd64: "x86_64", v1.ArchitectureArm64: "arm64"}

// aliasVariants lists the SSM parameters behind an alias for a Kubernetes
// version (e.g. "1.36").
func aliasVariants(alias awsv1.Alias, k8s string) ([]variant, error) {
	latest := alias.Version == awsv1.AliasVersionLatest
	var out []variant
	switch alias.Family {
	case awsv1.AMIFamilyAL2023:
		for _, arch := range []string{v1.ArchitectureAmd64, v1.ArchitectureArm64} {
			for _, flavour := range []struct {
				name string
				reqs []corev1.NodeSelectorRequirement
			}{{"standard", plain(arch)}, {"nvidia", gpu(arch)}, {"neuron", accelerator(arch)}} {
				leaf := "recommended"
				if !latest {
					leaf = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", ssmArch[arch], flavour.name, k8s, alias.Version)
				}
				out = append(out, variant{
					Parameter:    fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/%s/%s/%s/image_id", k8s, ssmArch[arch], flavour.name, leaf),
					Requirements: flavour.reqs,
				})
			}
		}
	case awsv1.AMIFamilyAL2:
		for _, f := range []struct {
			path, image string
			reqs        []corev1.NodeSelectorRequirement
		}{
			{"amazon-linux-2", "amazon-eks-node", plain(v1.ArchitectureAmd64)},
			{"amazon-linux-2-arm64", "amazon-eks-arm64-node", plain(v1.ArchitectureArm64)},
			{"amazon-linux-2-gpu", "amazon-eks-gpu-node", gpu(v1.ArchitectureAmd64)},
			{"amazon-linux-2-gpu", "amazon-eks-gpu-node", accelerator(v1.ArchitectureAmd64)},
		} {
			leaf := "recommended"
			if !latest {
				leaf = fmt.Sprintf("%s-%s-%s", f.image, k8s, alias.Version)
			}
			out = append(out, variant{Parameter: fmt.Sprintf("/aws/service/eks/optimized-ami/%s/%s/%s/image_id", k8s, f.path, leaf), Requirements: f.reqs})
		}
	case awsv1.AMIFamilyBottlerocket:
		version := "latest"
		if !latest {
			version = strings.TrimPrefix(alias.Version, "v")
		}
		for _, arch := range []string{v1.ArchitectureAmd64, v1.ArchitectureArm64} {
			out = append(out,
				variant{Parameter: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s/%s/%s/image_id", k8s, ssmArch[arch], version), Requirements: plain(arch)},
				variant{Parameter: fmt.Sprintf("/aws/service/bottlerocket/aws-k8s-%s-nvidia/%s/%s/image_id", k8s, ssmArch[arch], version), Requirements: gpu(arch)},
			)
		}
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		if !latest {
			return nil, fmt.Errorf("alias %s: Windows aliases only support @latest", alias)
		}
		if alias.Family == awsv1.AMIFamilyWindows2025 && minorBelow(k8s, 35) {
			return nil, fmt.Errorf("alias %s: EKS publishes Windows Server 2025 images for Kubernetes 1.35 and later, and the cluster runs %s; use windows2022@latest", alias, k8s)
		}
		year := strings.TrimPrefix(alias.Family, "Windows")
		out = append(out, variant{
			Parameter: fmt.Sprintf("/aws/service/ami-windows-latest/Windows_Server-%s-English-Core-EKS_Optimized-%s/image_id", year, k8s),
			Requirements: []corev1.NodeSelectorRequirement{archReq(v1.ArchitectureAmd64),
				{Key: corev1.LabelOSStable, Operator: corev1.NodeSelectorOpIn, Values: []string{string(corev1.Windows)}}},
		})
	default:
		return nil, fmt.Errorf("alias %s: unknown family", alias)
	}
	return out, nil
}

// minorBelow says whether a "1.NN" Kubernetes version's minor is below min;
// an unparsable version is not.
func minorBelow(k8s string, min int) bool {
	_, minor, _ := strings.Cut(k8s, ".")
	n, err := strconv.Atoi(minor)
	return err == nil && n < min
}
