package ec2

import (
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/protocol"
)

func (s *Service) runInstances(in *ec2.RunInstancesInput, dryRun bool) (*ec2.RunInstancesOutput, *protocol.Error) {
	minCount, maxCount := int(deref(in.MinCount)), int(deref(in.MaxCount))
	if minCount < 1 || maxCount < minCount {
		return nil, errorf("InvalidParameterValue", "MinCount (%d) must be at least 1 and not above MaxCount (%d)", minCount, maxCount)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	token := deref(in.ClientToken)
	if prev, ok := s.runTokens[token]; ok && token != "" && !dryRun {
		return prev, nil
	}
	data := &ec2types.RequestLaunchTemplateData{}
	if lts := in.LaunchTemplate; lts != nil {
		lt, err := s.template(deref(lts.LaunchTemplateId), deref(lts.LaunchTemplateName))
		if err != nil {
			return nil, err
		}
		if err := checkVersion(deref(lts.Version)); err != nil {
			return nil, err
		}
		data = &lt.data
	}
	spec, err := s.specFromTemplate(data)
	if err != nil {
		return nil, err
	}
	if in.InstanceType != "" {
		spec.instanceType = string(in.InstanceType)
	}
	if err := s.setImage(&spec, deref(in.ImageId)); err != nil {
		return nil, err
	}
	if err := checkComplete(spec); err != nil {
		return nil, err
	}
	if in.UserData != nil {
		spec.userData = *in.UserData
	}
	for _, m := range in.BlockDeviceMappings {
		r := deviceRequest{name: deref(m.DeviceName), none: m.NoDevice != nil}
		if m.Ebs != nil {
			r.sizeGiB = deref(m.Ebs.VolumeSize)
		}
		spec.devices = append(spec.devices, r)
	}
	if len(in.SecurityGroupIds) > 0 {
		spec.groups = in.SecurityGroupIds
	}
	if err := s.checkGroups(spec.groups); err != nil {
		return nil, err
	}
	if in.IamInstanceProfile != nil {
		spec.profile = deref(in.IamInstanceProfile.Arn)
		if spec.profile == "" {
			spec.profile = deref(in.IamInstanceProfile.Name)
		}
	}
	if mo := in.InstanceMarketOptions; mo != nil && mo.MarketType == ec2types.MarketTypeSpot {
		spec.capacityType = "spot"
	}
	zone := ""
	if pl := in.Placement; pl != nil {
		zone = deref(pl.AvailabilityZone)
		if pl.Tenancy != "" {
			if err := checkTenancy(pl.Tenancy); err != nil {
				return nil, err
			}
			spec.tenancy = pl.Tenancy
		}
		if req := (placementRequest{name: deref(pl.GroupName), id: deref(pl.GroupId), partition: deref(pl.PartitionNumber)}); !req.empty() {
			if spec.placement, err = s.resolvePlacement(req); err != nil {
				return nil, err
			}
			spec.partition = req.partition
		}
	}
	if spec.subnet, err = s.subnetFor(deref(in.SubnetId), zone, spec.subnet); err != nil {
		return nil, err
	}
	if len(spec.groups) == 0 {
		spec.groups = []string{*s.world.groups[0].GroupId}
	}
	spec.tags = mergeTags(spec.tags, tagsFor(in.TagSpecifications, ec2types.ResourceTypeInstance))
	if err := s.launchable(spec); err != nil {
		return nil, err
	}
	if err := s.placementRoom(spec); err != nil {
		return nil, err
	}
	n := 0
	for n < maxCount && s.capacityFor(spec, n) {
		n++
	}
	if n < minCount {
		return nil, s.capacityError(spec)
	}
	if dryRun {
		return nil, nil
	}
	spec.reservationID = "r-" + s.ids.Hex(17)
	out := &ec2.RunInstancesOutput{ReservationId: ptr(spec.reservationID), OwnerId: ptr(s.opts.AccountID), Groups: []ec2types.GroupIdentifier{}}
	for i := 0; i < n; i++ {
		out.Instances = append(out.Instances, s.launch(spec, i).Instance)
	}
	if token != "" {
		s.runTokens[token] = out
	}
	return out, nil
}
