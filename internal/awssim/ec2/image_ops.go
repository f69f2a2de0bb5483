package ec2

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

func (s *Service) describeImages(in *ec2.DescribeImagesInput, _ bool) (*ec2.DescribeImagesOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range in.ImageIds {
		if len(id) < 5 || id[:4] != "ami-" {
			return nil, errorf("InvalidAMIID.Malformed", "Invalid id: \"%s\" (expecting \"ami-...\")", id)
		}
		if s.imageByID(id) == nil {
			return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
		}
	}
	var found []ec2types.Image
	for _, im := range s.world.images {
		if !allowed(in.ImageIds, *im.ImageId) || !ownedBy(in.Owners, im, s.opts.AccountID) {
			continue
		}
		ok, err := matches(in.Filters, im.Tags, func(name string) ([]string, bool) {
			switch name {
			case "image-id":
				return []string{*im.ImageId}, true
			case "name":
				return []string{*im.Name}, true
			case "architecture":
				return []string{string(im.Architecture)}, true
			case "state":
				return []string{string(im.State)}, true
			case "owner-id":
				return []string{*im.OwnerId}, true
			case "owner-alias":
				return []string{deref(im.ImageOwnerAlias)}, true
			case "is-public":
				return []string{boolString(*im.Public)}, true
			case "image-type":
				return []string{string(im.ImageType)}, true
			case "root-device-type":
				return []string{string(im.RootDeviceType)}, true
			case "virtualization-type":
				return []string{string(im.VirtualizationType)}, true
			case "hypervisor":
				return []string{string(im.Hypervisor)}, true
			case "description":
				return []string{*im.Description}, true
			case "platform-details":
				return []string{*im.PlatformDetails}, true
			}
			return nil, false
		})
		if err != nil {
			return nil, err
		}
		if ok {
			found = append(found, im.Image)
		}
	}
	start, end, next, err := page(len(found), in.MaxResults, in.NextToken, 0)
	if err != nil {
		return nil, err
	}
	return &ec2.DescribeImagesOutput{Images: append([]ec2types.Image{}, found[start:end]...), NextToken: next}, nil
}

// ownedBy applies DescribeImages' Owners: account IDs, "amazon" or "self".
func ownedBy(owners []string, im *image, self string) bool {
	if len(owners) == 0 {
		return true
	}
	for _, o := range owners {
		switch o {
		case "self":
			if *im.OwnerId == self {
				return true
			}
		case *im.OwnerId, deref(im.ImageOwnerAlias):
			return o != ""
		}
	}
	return false
}

// copyImage copies an image within the region into the account: the copy
// is the account's own, private, with the request's name, description and
// image tags. Karpenter's e2e suites copy an EKS image to deprecate it.
func (s *Service) copyImage(in *ec2.CopyImageInput, dryRun bool) (*ec2.CopyImageOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if region := deref(in.SourceRegion); region != s.opts.Region {
		return nil, errNotSimulated("copying images from region %s into %s", region, s.opts.Region)
	}
	id := deref(in.SourceImageId)
	src := s.imageByID(id)
	if src == nil {
		return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
	}
	if dryRun {
		return nil, nil
	}
	cp := &image{Image: src.Image, release: src.release}
	cp.ImageId = ptr("ami-" + s.ids.Hex(17))
	cp.Name, cp.Description = in.Name, in.Description
	cp.ImageLocation = ptr(s.opts.AccountID + "/" + deref(in.Name))
	cp.OwnerId, cp.ImageOwnerAlias, cp.Public = ptr(s.opts.AccountID), nil, ptr(false)
	cp.CreationDate = ptr(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	cp.Tags = tagsFor(in.TagSpecifications, ec2types.ResourceTypeImage)
	if deref(in.CopyImageTags) {
		cp.Tags = mergeTags(append([]ec2types.Tag{}, src.Tags...), cp.Tags)
	}
	// A copy is not an EKS release of any Kubernetes minor.
	cp.release.ImageID, cp.release.Name, cp.release.Kubernetes = *cp.ImageId, *cp.Name, ""
	s.world.images = append(s.world.images, cp)
	return &ec2.CopyImageOutput{ImageId: cp.ImageId}, nil
}

// enableImageDeprecation sets when one of the account's images is
// deprecated; EC2 keeps the time to the minute.
func (s *Service) enableImageDeprecation(in *ec2.EnableImageDeprecationInput, dryRun bool) (*ec2.EnableImageDeprecationOutput, *protocol.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := deref(in.ImageId)
	im := s.imageByID(id)
	if im == nil {
		return nil, errorf("InvalidAMIID.NotFound", "The image id '[%s]' does not exist", id)
	}
	if *im.OwnerId != s.opts.AccountID {
		return nil, errorf("AuthFailure", "Not authorized for image:%s", id)
	}
	if dryRun {
		return nil, nil
	}
	im.DeprecationTime = ptr(deref(in.DeprecateAt).UTC().Truncate(time.Minute).Format("2006-01-02T15:04:05.000Z"))
	return &ec2.EnableImageDeprecationOutput{Return: ptr(true)}, nil
}
