package ec2

import (
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
				return []string{*im.ImageOwnerAlias}, true
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
		case *im.OwnerId, *im.ImageOwnerAlias:
			return true
		}
	}
	return false
}
