package ec2

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// The image families, architectures and variants EKS publishes optimized
// images for, and the simulator seeds.
var (
	ImageFamilies      = []string{"al2023", "al2", "bottlerocket", "windows2019", "windows2022", "windows2025"}
	ImageArchitectures = []string{"x86_64", "arm64"}
	ImageVariants      = []string{"standard", "nvidia", "neuron"}
)

// published is whether EKS publishes an image of a family, architecture and
// variant: no arm64 GPU image for AL2, Neuron images for AL2023 on x86_64
// only, and Windows Server Core images for x86_64 without accelerators.
func published(family, arch, variant string) bool {
	if IsWindows(family) {
		return arch == "x86_64" && variant == "standard"
	}
	switch variant {
	case "nvidia":
		return family != "al2" || arch != "arm64"
	case "neuron":
		return family == "al2023" && arch == "x86_64"
	}
	return true
}

// IsWindows says whether an image family is an EKS-optimized Windows
// Server Core family.
func IsWindows(family string) bool { return strings.HasPrefix(family, "windows") }

// amazonAccount owns the EKS-optimized images in the simulated region.
const amazonAccount = "602401143452"

// ImageRelease is one published EKS-optimized image.
type ImageRelease struct {
	Family       string // al2023, al2, bottlerocket, windows2019, windows2022, windows2025
	Architecture string // x86_64, arm64
	Variant      string // standard, nvidia, neuron
	Release      int    // 0 for the seeded image, counting up with each publication
	Kubernetes   string // the Kubernetes minor the image is built for
	Version      string // the family's release version string, e.g. v20261101, 1.50.0 or 2026.11.01
	ImageID      string
	Name         string
}

type image struct {
	ec2types.Image
	release ImageRelease
}

var seedDate = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// seedImages are the cluster's Kubernetes minor's images, then the previous
// minor's, which EKS still publishes (upgrades and version-skew tests pin
// them).
func seedImages(s *Service) []*image {
	var out []*image
	for _, k8s := range []string{s.opts.KubernetesVersion, previousMinor(s.opts.KubernetesVersion)} {
		for _, f := range ImageFamilies {
			for _, a := range ImageArchitectures {
				for _, v := range ImageVariants {
					if published(f, a, v) {
						out = append(out, newImage(s, k8s, f, a, v, 0))
					}
				}
			}
		}
	}
	return out
}

// previousMinor is the Kubernetes minor before v ("1.36" -> "1.35").
func previousMinor(v string) string {
	major, minor, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(minor)
	if err != nil || n == 0 {
		return v
	}
	return major + "." + strconv.Itoa(n-1)
}

// newImage makes release n of an image for a Kubernetes minor; later
// releases are a week apart.
func newImage(s *Service, k8s, family, arch, variant string, n int) *image {
	created := seedDate.Add(time.Duration(n) * 7 * 24 * time.Hour)
	r := ImageRelease{Family: family, Architecture: arch, Variant: variant, Release: n, Kubernetes: k8s, ImageID: "ami-" + s.ids.Hex(17)}
	switch family {
	case "al2023":
		r.Version = "v" + created.Format("20060102")
		r.Name = fmt.Sprintf("amazon-eks-node-al2023-%s-%s-%s-%s", arch, variant, k8s, r.Version)
	case "al2":
		r.Version = "v" + created.Format("20060102")
		kind := "node"
		if variant == "nvidia" {
			kind = "gpu-node"
		} else if arch == "arm64" {
			kind = "arm64-node"
		}
		r.Name = fmt.Sprintf("amazon-eks-%s-%s-%s", kind, k8s, r.Version)
	case "bottlerocket":
		r.Version = fmt.Sprintf("1.%d.0", 50+n)
		flavour := ""
		if variant == "nvidia" {
			flavour = "-nvidia"
		}
		r.Name = fmt.Sprintf("bottlerocket-aws-k8s-%s%s-%s-v%s-%s", k8s, flavour, arch, r.Version, s.ids.Hex(8))
	case "windows2019", "windows2022", "windows2025":
		r.Version = created.Format("2006.01.02")
		r.Name = fmt.Sprintf("Windows_Server-%s-English-Core-EKS_Optimized-%s-%s", strings.TrimPrefix(family, "windows"), k8s, r.Version)
	}
	platform, details, root, size := ec2types.PlatformValues(""), "Linux/UNIX", "/dev/xvda", int32(20)
	if IsWindows(family) {
		platform, details, root, size = ec2types.PlatformValuesWindows, "Windows", "/dev/sda1", 50
	}
	return &image{release: r, Image: ec2types.Image{
		ImageId:             ptr(r.ImageID),
		Name:                ptr(r.Name),
		Description:         ptr(fmt.Sprintf("EKS-optimized Kubernetes %s node image (%s, %s, %s)", k8s, family, arch, variant)),
		Architecture:        ec2types.ArchitectureValues(arch),
		CreationDate:        ptr(created.Format("2006-01-02T15:04:05.000Z")),
		DeprecationTime:     ptr(created.AddDate(2, 0, 0).Format("2006-01-02T15:04:05.000Z")),
		ImageLocation:       ptr("amazon/" + r.Name),
		ImageOwnerAlias:     ptr("amazon"),
		OwnerId:             ptr(amazonAccount),
		Public:              ptr(true),
		State:               ec2types.ImageStateAvailable,
		ImageType:           ec2types.ImageTypeValuesMachine,
		RootDeviceName:      ptr(root),
		RootDeviceType:      ec2types.DeviceTypeEbs,
		VirtualizationType:  ec2types.VirtualizationTypeHvm,
		Hypervisor:          ec2types.HypervisorTypeXen,
		EnaSupport:          ptr(true),
		Platform:            platform,
		PlatformDetails:     ptr(details),
		UsageOperation:      ptr("RunInstances"),
		BlockDeviceMappings: s.imageVolumes(family, root, size),
	}}
}

// imageVolumes are an image's block device mappings: its root volume, and
// on Bottlerocket a small OS root beside the data volume its kubelet uses.
func (s *Service) imageVolumes(family, root string, size int32) []ec2types.BlockDeviceMapping {
	vol := func(dev string, size int32) ec2types.BlockDeviceMapping {
		return ec2types.BlockDeviceMapping{DeviceName: ptr(dev), Ebs: &ec2types.EbsBlockDevice{
			SnapshotId: ptr("snap-" + s.ids.Hex(17)), VolumeSize: ptr(size),
			VolumeType: ec2types.VolumeTypeGp3, DeleteOnTermination: ptr(true), Encrypted: ptr(false),
		}}
	}
	if family == "bottlerocket" {
		return []ec2types.BlockDeviceMapping{vol(root, 2), vol(BottlerocketDataDevice, size)}
	}
	return []ec2types.BlockDeviceMapping{vol(root, size)}
}

// BottlerocketDataDevice holds a Bottlerocket node's container and pod
// storage: its kubelet's ephemeral storage.
const BottlerocketDataDevice = "/dev/xvdb"

// Images returns the newest release of every family, architecture and
// variant for the cluster's Kubernetes minor.
func (s *Service) Images() []ImageRelease { return s.images(s.opts.KubernetesVersion) }

// PreviousMinorImages returns the previous Kubernetes minor's images.
func (s *Service) PreviousMinorImages() []ImageRelease {
	return s.images(previousMinor(s.opts.KubernetesVersion))
}

func (s *Service) images(k8s string) []ImageRelease {
	s.mu.Lock()
	defer s.mu.Unlock()
	latest := map[[3]string]ImageRelease{}
	var keys [][3]string
	for _, im := range s.world.images {
		if im.release.Kubernetes != k8s {
			continue
		}
		k := [3]string{im.release.Family, im.release.Architecture, im.release.Variant}
		if _, seen := latest[k]; !seen {
			keys = append(keys, k)
		}
		if cur, ok := latest[k]; !ok || im.release.Release > cur.Release {
			latest[k] = im.release
		}
	}
	out := make([]ImageRelease, 0, len(keys))
	for _, k := range keys {
		out = append(out, latest[k])
	}
	return out
}

// PublishImage releases a new image of a family, architecture and variant,
// as EKS does every few weeks; older releases stay describable.
func (s *Service) PublishImage(family, arch, variant string) (ImageRelease, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := -1
	for _, im := range s.world.images {
		r := im.release
		if r.Kubernetes == s.opts.KubernetesVersion && r.Family == family && r.Architecture == arch && r.Variant == variant && r.Release > next {
			next = r.Release
		}
	}
	if next < 0 {
		return ImageRelease{}, fmt.Errorf("no image family %s/%s/%s: families are %v, architectures %v, variants %v",
			family, arch, variant, ImageFamilies, ImageArchitectures, ImageVariants)
	}
	im := newImage(s, s.opts.KubernetesVersion, family, arch, variant, next+1)
	s.world.images = append(s.world.images, im)
	return im.release, nil
}

func (s *Service) imageByID(id string) *image {
	for _, im := range s.world.images {
		if *im.ImageId == id {
			return im
		}
	}
	return nil
}

// ImageFamily is the family of the image with an ID, "" when unknown.
func (s *Service) ImageFamily(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.imageByID(id); im != nil {
		return im.release.Family
	}
	return ""
}
