package launchtemplate

// What a launch template holds: the EC2 request data rendered from a Config.

import (
	"encoding/base64"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
)

func data(cfg Config) *ec2types.RequestLaunchTemplateData {
	d := &ec2types.RequestLaunchTemplateData{
		ImageId:             aws.String(cfg.AMIID),
		BlockDeviceMappings: blockDevices(cfg.BlockDeviceMappings),
		MetadataOptions:     metadata(cfg.MetadataOptions),
		Monitoring:          &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(cfg.DetailedMonitoring)},
	}
	switch {
	case cfg.CapacityReservationID != "":
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceCapacityReservationsOnly,
			CapacityReservationTarget:     &ec2types.CapacityReservationTarget{CapacityReservationId: aws.String(cfg.CapacityReservationID)},
		}
	case cfg.ReservationsSelected:
		d.CapacityReservationSpecification = &ec2types.LaunchTemplateCapacityReservationSpecificationRequest{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceNone,
		}
	}
	if cfg.CapacityReservationID != "" {
		switch {
		case cfg.CapacityReservationType == awsv1.CapacityReservationTypeCapacityBlock:
			d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeCapacityBlock}
		case cfg.Interruptible:
			d.InstanceMarketOptions = &ec2types.LaunchTemplateInstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeInterruptibleCapacityReservation}
		}
	}
	if cfg.UserData != "" {
		d.UserData = aws.String(base64.StdEncoding.EncodeToString([]byte(cfg.UserData)))
	}
	if cfg.InstanceProfile != "" {
		d.IamInstanceProfile = &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(cfg.InstanceProfile)}
	}
	groups := append([]string{}, cfg.SecurityGroupIDs...)
	sort.Strings(groups)
	if nis := interfaces(cfg, groups); nis != nil {
		d.NetworkInterfaces = nis
	} else if cfg.AssociatePublicIP != nil || cfg.ConnectionTracking != nil || cfg.IPPrefixCount != nil || cfg.IPv6 {
		// The public IP choice, the prefixes, the connection tracking
		// timeouts and the IPv6 address live on the primary interface, which
		// must then carry the security groups.
		d.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{{
			DeviceIndex: aws.Int32(0), AssociatePublicIpAddress: cfg.AssociatePublicIP, Groups: groups,
			Ipv4PrefixCount:                 cfg.IPPrefixCount,
			ConnectionTrackingSpecification: connectionTracking(cfg.ConnectionTracking),
		}}
	} else {
		d.SecurityGroupIds = groups
	}
	if cfg.IPv6 {
		withIPv6(d.NetworkInterfaces)
	}
	if e := cfg.EnclaveOptions; e != nil {
		d.EnclaveOptions = &ec2types.LaunchTemplateEnclaveOptionsRequest{Enabled: aws.Bool(e.Enabled)}
	}
	if cfg.PlacementGroupID != "" || cfg.Tenancy != "" {
		d.Placement = &ec2types.LaunchTemplatePlacementRequest{Tenancy: ec2types.Tenancy(cfg.Tenancy)}
	}
	if cfg.PlacementGroupID != "" {
		d.Placement.GroupId = aws.String(cfg.PlacementGroupID)
		if cfg.PlacementPartition != 0 {
			d.Placement.PartitionNumber = aws.Int32(cfg.PlacementPartition)
		}
	}
	if c := cfg.CPUOptions; c != nil && c.NestedVirtualization != nil {
		d.CpuOptions = &ec2types.LaunchTemplateCpuOptionsRequest{NestedVirtualization: ec2types.NestedVirtualizationSpecification(*c.NestedVirtualization)}
	}
	return d
}

// interfaces are the template's interfaces for the node class's
// networkInterfaces or an EFA count, nil for neither. EC2 refuses IP
// prefixes, a public IP and connection tracking on efa-only interfaces.
func interfaces(cfg Config, groups []string) []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
	var out []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest
	for _, ni := range cfg.NetworkInterfaces {
		r := ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			NetworkCardIndex: aws.Int32(ni.NetworkCardIndex), DeviceIndex: aws.Int32(ni.DeviceIndex),
			InterfaceType: aws.String(string(ni.InterfaceType)), Groups: groups,
		}
		if ni.InterfaceType != awsv1.NetworkInterfaceTypeEFAOnly {
			r.Ipv4PrefixCount, r.AssociatePublicIpAddress = cfg.IPPrefixCount, cfg.AssociatePublicIP
			r.ConnectionTrackingSpecification = connectionTracking(cfg.ConnectionTracking)
		}
		out = append(out, r)
	}
	if len(cfg.NetworkInterfaces) > 0 {
		return out
	}
	for card := range cfg.EFACount {
		// Device 0 on the first card is the primary interface; the others
		// take device 1, so one card keeps the primary route.
		device := int32(1)
		if card == 0 {
			device = 0
		}
		out = append(out, ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			NetworkCardIndex: aws.Int32(int32(card)), DeviceIndex: aws.Int32(device), InterfaceType: aws.String("efa"),
			Groups: groups, Ipv4PrefixCount: cfg.IPPrefixCount, AssociatePublicIpAddress: cfg.AssociatePublicIP,
			ConnectionTrackingSpecification: connectionTracking(cfg.ConnectionTracking),
		})
	}
	return out
}

// withIPv6 gives the primary interface of an IPv6 cluster's node its IPv6
// address, and makes the prefixes every interface but an efa-only one is
// delegated IPv6 prefixes, as pods there get IPv6 addresses.
func withIPv6(nis []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest) {
	for i := range nis {
		ni := &nis[i]
		if aws.ToString(ni.InterfaceType) == string(awsv1.NetworkInterfaceTypeEFAOnly) {
			continue
		}
		ni.Ipv6PrefixCount, ni.Ipv4PrefixCount = ni.Ipv4PrefixCount, nil
		if aws.ToInt32(ni.NetworkCardIndex) == 0 && aws.ToInt32(ni.DeviceIndex) == 0 {
			ni.PrimaryIpv6, ni.Ipv6AddressCount = aws.Bool(true), aws.Int32(1)
		}
	}
}

func connectionTracking(c *awsv1.ConnectionTracking) *ec2types.ConnectionTrackingSpecificationRequest {
	if c == nil {
		return nil
	}
	return &ec2types.ConnectionTrackingSpecificationRequest{
		TcpEstablishedTimeout: c.TCPEstablishedTimeout, UdpStreamTimeout: c.UDPStreamTimeout, UdpTimeout: c.UDPTimeout,
	}
}

func blockDevices(bdms []*awsv1.BlockDeviceMapping) []ec2types.LaunchTemplateBlockDeviceMappingRequest {
	var out []ec2types.LaunchTemplateBlockDeviceMappingRequest
	for _, b := range bdms {
		if b == nil {
			continue
		}
		r := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: b.DeviceName}
		if e := b.EBS; e != nil {
			ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				DeleteOnTermination: e.DeleteOnTermination, Encrypted: e.Encrypted, KmsKeyId: e.KMSKeyID,
				SnapshotId: e.SnapshotID, VolumeInitializationRate: e.VolumeInitializationRate,
			}
			if e.IOPS != nil {
				ebs.Iops = aws.Int32(int32(*e.IOPS))
			}
			if e.Throughput != nil {
				ebs.Throughput = aws.Int32(int32(*e.Throughput))
			}
			if e.VolumeSize != nil {
				ebs.VolumeSize = aws.Int32(int32(VolumeGiB(*e.VolumeSize)))
			}
			if e.VolumeType != nil {
				ebs.VolumeType = ec2types.VolumeType(*e.VolumeType)
			}
			r.Ebs = ebs
		}
		out = append(out, r)
	}
	return out
}

// VolumeGiB rounds a volume size up to whole GiB, the unit EC2 takes (and
// bills).
func VolumeGiB(q resource.Quantity) int64 {
	const g = 1 << 30
	return (q.Value() + g - 1) / g
}

func metadata(m *awsv1.MetadataOptions) *ec2types.LaunchTemplateInstanceMetadataOptionsRequest {
	m = WithMetadataDefaults(m)
	return &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(*m.HTTPEndpoint),
		HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(*m.HTTPProtocolIPv6),
		HttpPutResponseHopLimit: aws.Int32(int32(*m.HTTPPutResponseHopLimit)),
		HttpTokens:              ec2types.LaunchTemplateHttpTokensState(*m.HTTPTokens),
	}
}

// WithMetadataDefaults fills unset IMDS options with the v1 defaults:
// endpoint enabled, IPv6 disabled, hop limit 1, tokens required.
func WithMetadataDefaults(m *awsv1.MetadataOptions) *awsv1.MetadataOptions {
	out := awsv1.MetadataOptions{}
	if m != nil {
		out = *m.DeepCopy()
	}
	if out.HTTPEndpoint == nil {
		out.HTTPEndpoint = aws.String("enabled")
	}
	if out.HTTPProtocolIPv6 == nil {
		out.HTTPProtocolIPv6 = aws.String("disabled")
	}
	if out.HTTPPutResponseHopLimit == nil {
		out.HTTPPutResponseHopLimit = aws.Int64(1)
	}
	if out.HTTPTokens == nil {
		out.HTTPTokens = aws.String("required")
	}
	return &out
}

// BlockDeviceMappings are the volumes nodes of nc launch with: its own
// mappings, else its AMI family's defaults.
func BlockDeviceMappings(nc *awsv1.EC2NodeClass) []*awsv1.BlockDeviceMapping {
	if len(nc.Spec.BlockDeviceMappings) > 0 {
		return nc.Spec.BlockDeviceMappings
	}
	return DefaultBlockDeviceMappings(nc.AMIFamily())
}

// DefaultBlockDeviceMappings are the volumes of an AMI family when the node
// class maps none: a 20Gi encrypted gp3 root (AL2, AL2023), a 4Gi root and
// 20Gi data volume (Bottlerocket), a 50Gi root (Windows), none for Custom.
func DefaultBlockDeviceMappings(family string) []*awsv1.BlockDeviceMapping {
	vol := func(dev, size string, root bool) *awsv1.BlockDeviceMapping {
		q := resource.MustParse(size)
		return &awsv1.BlockDeviceMapping{DeviceName: aws.String(dev), RootVolume: root, EBS: &awsv1.BlockDevice{
			VolumeSize: &q, VolumeType: aws.String("gp3"), Encrypted: aws.Bool(true), DeleteOnTermination: aws.Bool(true),
		}}
	}
	switch family {
	case awsv1.AMIFamilyAL2, awsv1.AMIFamilyAL2023:
		return []*awsv1.BlockDeviceMapping{vol("/dev/xvda", "20Gi", true)}
	case awsv1.AMIFamilyBottlerocket:
		return []*awsv1.BlockDeviceMapping{vol("/dev/xvda", "4Gi", true), vol("/dev/xvdb", "20Gi", false)}
	case awsv1.AMIFamilyWindows2019, awsv1.AMIFamilyWindows2022, awsv1.AMIFamilyWindows2025:
		return []*awsv1.BlockDeviceMapping{vol("/dev/sda1", "50Gi", true)}
	}
	return nil
}
