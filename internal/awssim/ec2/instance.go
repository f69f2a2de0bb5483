package ec2

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// instance is a simulated instance: the state EC2 reports, plus what the
// simulator needs to run its lifecycle.
type instance struct {
	ec2types.Instance
	reservationID string
	userData      string // base64, as launched
	pool          pool
	reservation   *capacityReservation
	subnet        *subnet
	visibleAt     time.Time
	timer         *time.Timer
	status        instanceHealth
	volumes       []volume
	// prefixes is how many /28s of the subnet the instance holds.
	prefixes int32
}

// instanceHealth is what DescribeInstanceStatus reports beyond the state.
type instanceHealth struct {
	instanceImpaired bool
	systemImpaired   bool
	// instanceImpairedSince and systemImpairedSince are when the checks
	// began failing (zero while they pass).
	instanceImpairedSince time.Time
	systemImpairedSince   time.Time
	events                []ec2types.InstanceStatusEvent
}

// launchSpec is one instance to launch, resolved from a request, its launch
// template and an override.
type launchSpec struct {
	instanceType  string
	capacityType  string // "spot" or "on-demand"
	subnet        *subnet
	image         *image
	groups        []string
	userData      string
	tags          []ec2types.Tag
	profile       string // instance profile name or ARN
	metadata      *ec2types.InstanceMetadataOptionsResponse
	reservation   *capacityReservation
	reservationID string
	// market is the launch template's InstanceMarketOptions.MarketType
	// (capacity-block, interruptible-capacity-reservation; spot sets
	// capacityType instead).
	market ec2types.MarketType
	// interfaces beyond the primary one (card 0, device 0) the template
	// declares, EFA set-ups in particular.
	interfaces []extraInterface
	// primaryKind is the primary interface's type: interface, or efa.
	primaryKind string
	// ipv6: the primary interface asks for an IPv6 address (PrimaryIpv6 or
	// Ipv6AddressCount), as launches into IPv6 clusters do.
	ipv6 bool
	// placement is the placement group the instance launches into, and
	// partition the partition asked for (0: EC2 picks).
	placement *placementGroup
	partition int32
	// tenancy is the Placement.Tenancy asked for ("" is default).
	tenancy ec2types.Tenancy
	// ipv4Prefixes and ipv6Prefixes are the prefixes (prefix delegation)
	// the primary interface asks for: /28s of the subnet, /80s of the VPC.
	ipv4Prefixes, ipv6Prefixes int32
	// devices are the block device mappings the template and then the
	// request ask for, over the image's.
	devices []deviceRequest
}

// deviceRequest is one requested block device mapping.
type deviceRequest struct {
	name    string
	sizeGiB int32 // 0: the image's size
	none    bool  // NoDevice: drop the image's mapping
}

// volume is an EBS volume attached to an instance.
type volume struct {
	id, device string
	sizeGiB    int32
}

// volumes are the EBS volumes a launch attaches: the image's mappings with
// the requests applied in order (a size replaces the image's, NoDevice
// drops a mapping, a new device adds a volume).
func (s *Service) volumes(spec launchSpec) []volume {
	var out []volume
	for _, m := range spec.image.BlockDeviceMappings {
		if m.Ebs != nil {
			out = append(out, volume{device: deref(m.DeviceName), sizeGiB: deref(m.Ebs.VolumeSize)})
		}
	}
	for _, r := range spec.devices {
		i := slices.IndexFunc(out, func(v volume) bool { return v.device == r.name })
		switch {
		case r.none && i >= 0:
			out = slices.Delete(out, i, i+1)
		case r.none:
		case i >= 0 && r.sizeGiB > 0:
			out[i].sizeGiB = r.sizeGiB
		case i < 0 && r.sizeGiB > 0:
			out = append(out, volume{device: r.name, sizeGiB: r.sizeGiB})
		}
	}
	for i := range out {
		out[i].id = "vol-" + s.ids.Hex(17)
	}
	return out
}

// extraInterface is a network interface besides the primary one.
type extraInterface struct {
	card, device int32
	kind         string // interface, efa or efa-only
}

// isEFA reports whether the interface type brings an EFA device.
func isEFA(kind string) bool { return kind == "efa" || kind == "efa-only" }

var (
	statePending      = ec2types.InstanceState{Code: ptr(int32(0)), Name: ec2types.InstanceStateNamePending}
	stateRunning      = ec2types.InstanceState{Code: ptr(int32(16)), Name: ec2types.InstanceStateNameRunning}
	stateShuttingDown = ec2types.InstanceState{Code: ptr(int32(32)), Name: ec2types.InstanceStateNameShuttingDown}
	stateTerminated   = ec2types.InstanceState{Code: ptr(int32(48)), Name: ec2types.InstanceStateNameTerminated}
)

// launch creates a pending instance and schedules it to run. The caller
// holds s.mu and has checked capacity.
func (s *Service) launch(spec launchSpec, index int) *instance {
	now := time.Now().UTC().Truncate(time.Second)
	id := "i-" + s.ids.Hex(17)
	ip, _ := spec.subnet.allocateIP()
	dnsSuffix := s.opts.Region + ".compute.internal"
	if s.opts.Region == "us-east-1" {
		dnsSuffix = "ec2.internal"
	}
	dns := "ip-" + strings.ReplaceAll(ip.String(), ".", "-") + "." + dnsSuffix
	info, _ := s.catalog.InstanceType(spec.instanceType)
	groups := make([]ec2types.GroupIdentifier, 0, len(spec.groups))
	for _, g := range spec.groups {
		if sg := s.groupByID(g); sg != nil {
			groups = append(groups, ec2types.GroupIdentifier{GroupId: sg.GroupId, GroupName: sg.GroupName})
		}
	}
	in := &instance{
		reservationID: spec.reservationID,
		userData:      spec.userData,
		pool:          pool{spec.instanceType, *spec.subnet.AvailabilityZone, spec.capacityType},
		reservation:   spec.reservation,
		subnet:        spec.subnet,
		visibleAt:     time.Now().Add(s.visibilityDelay),
		volumes:       s.volumes(spec),
	}
	in.Instance = ec2types.Instance{
		InstanceId:            ptr(id),
		ImageId:               spec.image.ImageId,
		InstanceType:          ec2types.InstanceType(spec.instanceType),
		State:                 &statePending,
		StateTransitionReason: ptr(""),
		PrivateDnsName:        ptr(dns),
		PrivateIpAddress:      ptr(ip.String()),
		PublicDnsName:         ptr(""),
		SubnetId:              spec.subnet.SubnetId,
		VpcId:                 spec.subnet.VpcId,
		Placement: &ec2types.Placement{
			AvailabilityZone: spec.subnet.AvailabilityZone, AvailabilityZoneId: spec.subnet.AvailabilityZoneId,
			Tenancy: orDefaultTenancy(spec.tenancy), GroupName: ptr(""),
		},
		LaunchTime:         ptr(now),
		AmiLaunchIndex:     ptr(int32(index)),
		Architecture:       spec.image.Architecture,
		Hypervisor:         ec2types.HypervisorTypeXen,
		VirtualizationType: ec2types.VirtualizationTypeHvm,
		RootDeviceName:     spec.image.RootDeviceName,
		RootDeviceType:     ec2types.DeviceTypeEbs,
		EbsOptimized:       ptr(true),
		EnaSupport:         ptr(true),
		SourceDestCheck:    ptr(true),
		Monitoring:         &ec2types.Monitoring{State: ec2types.MonitoringStateDisabled},
		SecurityGroups:     groups,
		Tags:               spec.tags,
		Platform:           spec.image.Platform,
		PlatformDetails:    spec.image.PlatformDetails,
		UsageOperation:     ptr("RunInstances"),
		BootMode:           ec2types.BootModeValuesUefiPreferred,
		MetadataOptions:    spec.metadata,
		ClientToken:        ptr(s.ids.UUID()),
		NetworkInterfaces: []ec2types.InstanceNetworkInterface{{
			NetworkInterfaceId: ptr("eni-" + s.ids.Hex(17)), SubnetId: spec.subnet.SubnetId, VpcId: spec.subnet.VpcId,
			PrivateIpAddress: ptr(ip.String()), PrivateDnsName: ptr(dns), Groups: groups,
			Status: ec2types.NetworkInterfaceStatusInUse, InterfaceType: ptr("interface"),
			OwnerId: ptr(s.opts.AccountID), SourceDestCheck: ptr(true),
			Attachment: &ec2types.InstanceNetworkInterfaceAttachment{
				AttachmentId: ptr("eni-attach-" + s.ids.Hex(17)), DeviceIndex: ptr(int32(0)), NetworkCardIndex: ptr(int32(0)),
				Status: ec2types.AttachmentStatusAttached, AttachTime: ptr(now), DeleteOnTermination: ptr(true),
			},
		}},
		CapacityReservationSpecification: &ec2types.CapacityReservationSpecificationResponse{
			CapacityReservationPreference: ec2types.CapacityReservationPreferenceOpen,
		},
	}
	for _, v := range in.volumes {
		in.BlockDeviceMappings = append(in.BlockDeviceMappings, ec2types.InstanceBlockDeviceMapping{
			DeviceName: ptr(v.device),
			Ebs: &ec2types.EbsInstanceBlockDevice{
				VolumeId: ptr(v.id), Status: ec2types.AttachmentStatusAttached,
				AttachTime: ptr(now), DeleteOnTermination: ptr(true),
			},
		})
	}
	if pg := spec.placement; pg != nil {
		in.Placement.GroupName, in.Placement.GroupId = pg.GroupName, pg.GroupId
		if n := s.partitionFor(spec); n != 0 {
			in.Placement.PartitionNumber = ptr(n)
		}
	}
	in.NetworkInterfaces[0].InterfaceType = ptr(spec.primaryKind)
	for _, x := range spec.interfaces {
		ni := ec2types.InstanceNetworkInterface{
			NetworkInterfaceId: ptr("eni-" + s.ids.Hex(17)), SubnetId: spec.subnet.SubnetId, VpcId: spec.subnet.VpcId,
			Status: ec2types.NetworkInterfaceStatusInUse, InterfaceType: ptr(x.kind), OwnerId: ptr(s.opts.AccountID),
			Attachment: &ec2types.InstanceNetworkInterfaceAttachment{
				AttachmentId: ptr("eni-attach-" + s.ids.Hex(17)), DeviceIndex: ptr(x.device), NetworkCardIndex: ptr(x.card),
				Status: ec2types.AttachmentStatusAttached, AttachTime: ptr(now), DeleteOnTermination: ptr(true),
			},
		}
		if x.kind != "efa-only" {
			ni.Groups = groups
		}
		in.NetworkInterfaces = append(in.NetworkInterfaces, ni)
	}
	for range spec.ipv4Prefixes {
		p, ok := spec.subnet.allocatePrefix()
		if !ok {
			break // launchable checked the room; a race with another launch only
		}
		in.prefixes++
		in.NetworkInterfaces[0].Ipv4Prefixes = append(in.NetworkInterfaces[0].Ipv4Prefixes, ec2types.InstanceIpv4Prefix{Ipv4Prefix: ptr(p.String())})
	}
	for i := range spec.ipv6Prefixes {
		// /80s under the instance's /64 of the VPC's 2600:1f14:6c3::/56.
		v4 := ip.As4()
		in.NetworkInterfaces[0].Ipv6Prefixes = append(in.NetworkInterfaces[0].Ipv6Prefixes, ec2types.InstanceIpv6Prefix{
			Ipv6Prefix: ptr(fmt.Sprintf("2600:1f14:6c3:%x:%x::/80", uint16(v4[1])<<8|uint16(v4[2]), uint16(v4[3])<<8|uint16(i+1))),
		})
	}
	if spec.ipv6 {
		// One address per instance, derived from its IPv4 one so it is
		// unique in the VPC's (simulated) 2600:1f14:6c3::/56.
		v4 := ip.As4()
		v6 := fmt.Sprintf("2600:1f14:6c3:%x::%x", uint16(v4[1])<<8|uint16(v4[2]), v4[3])
		in.Ipv6Address = ptr(v6)
		in.NetworkInterfaces[0].Ipv6Addresses = []ec2types.InstanceIpv6Address{{Ipv6Address: ptr(v6), IsPrimaryIpv6: ptr(true)}}
	}
	if info != nil && info.VCpuInfo != nil {
		in.CpuOptions = &ec2types.CpuOptions{CoreCount: info.VCpuInfo.DefaultCores, ThreadsPerCore: info.VCpuInfo.DefaultThreadsPerCore}
	}
	in.InstanceLifecycle = spec.lifecycle()
	if spec.capacityType == "spot" {
		in.SpotInstanceRequestId = ptr("sir-" + s.ids.Hex(8))
	}
	if spec.reservation != nil {
		in.CapacityReservationId = spec.reservation.CapacityReservationId
		in.CapacityReservationSpecification = &ec2types.CapacityReservationSpecificationResponse{
			CapacityReservationTarget: &ec2types.CapacityReservationTargetResponse{CapacityReservationId: spec.reservation.CapacityReservationId},
		}
		spec.reservation.AvailableInstanceCount = ptr(*spec.reservation.AvailableInstanceCount - 1)
	}
	if spec.profile != "" {
		in.IamInstanceProfile = s.instanceProfile(spec.profile)
	}
	s.used[in.pool]++
	s.instances[id] = in
	s.order = append(s.order, in)
	s.changed(in)
	in.timer = time.AfterFunc(s.opts.PendingDuration, func() { s.transition(id, statePending, stateRunning) })
	return in
}

// instanceProfile is how an instance shows its profile: IAM's ARN and ID
// when IAM is wired in, else ones derived from the name.
func (s *Service) instanceProfile(nameOrARN string) *ec2types.IamInstanceProfile {
	if s.opts.InstanceProfiles != nil {
		if arn, id, ok := s.opts.InstanceProfiles(nameOrARN); ok {
			return &ec2types.IamInstanceProfile{Arn: ptr(arn), Id: ptr(id)}
		}
	}
	arn := nameOrARN
	if !strings.HasPrefix(arn, "arn:") {
		arn = "arn:aws:iam::" + s.opts.AccountID + ":instance-profile/" + nameOrARN
	}
	return &ec2types.IamInstanceProfile{Arn: ptr(arn), Id: ptr(s.ids.Upper("AIPA", 21))}
}

// transition moves an instance from one state to the next, if it is still in
// the first (a terminate may have overtaken a pending instance).
func (s *Service) transition(id string, from, to ec2types.InstanceState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok || in.State.Name != from.Name {
		return
	}
	s.setState(in, to)
}

// setState changes an instance's state and tells the world. Caller holds s.mu.
func (s *Service) setState(in *instance, to ec2types.InstanceState) {
	in.State = &to
	switch to.Name {
	case ec2types.InstanceStateNameShuttingDown:
		id := *in.InstanceId
		in.timer = time.AfterFunc(s.opts.ShuttingDownDuration, func() { s.transition(id, stateShuttingDown, stateTerminated) })
	case ec2types.InstanceStateNameTerminated:
		s.used[in.pool]--
		in.subnet.release(1 + 16*in.prefixes)
		if in.reservation != nil {
			in.reservation.AvailableInstanceCount = ptr(*in.reservation.AvailableInstanceCount + 1)
		}
		id := *in.InstanceId
		in.timer = time.AfterFunc(s.opts.TerminatedRetention, func() { s.forget(id) })
	}
	s.changed(in)
}

// changed announces an instance's current state: the EventBridge
// state-change notification and the observers.
func (s *Service) changed(in *instance) {
	s.events.event(Event{
		Source: "aws.ec2", DetailType: "EC2 Instance State-change Notification", Time: time.Now().UTC(),
		Resources: []string{s.instanceARN(*in.InstanceId)},
		Detail:    map[string]any{"instance-id": *in.InstanceId, "state": string(in.State.Name)},
	})
	s.events.observe(in.Instance, decodeUserData(in.userData))
}

func (s *Service) forget(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok || in.State.Name != ec2types.InstanceStateNameTerminated {
		return
	}
	delete(s.instances, id)
	for i, o := range s.order {
		if o == in {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// terminate starts shutting an instance down. Caller holds s.mu.
func (s *Service) terminate(in *instance, reason string) (previous ec2types.InstanceState) {
	previous = *in.State
	switch in.State.Name {
	case ec2types.InstanceStateNameShuttingDown, ec2types.InstanceStateNameTerminated:
		return previous
	}
	if in.timer != nil {
		in.timer.Stop()
	}
	in.StateTransitionReason = ptr(fmt.Sprintf("%s (%s)", reason, time.Now().UTC().Format("2006-01-02 15:04:05 MST")))
	in.StateReason = &ec2types.StateReason{Code: ptr("Client.UserInitiatedShutdown"), Message: ptr("Client.UserInitiatedShutdown: User initiated shutdown")}
	if reason == spotReclaimReason {
		in.StateReason = &ec2types.StateReason{Code: ptr("Server.SpotInstanceTermination"), Message: ptr("Server.SpotInstanceTermination: Spot instance termination")}
	}
	s.setState(in, stateShuttingDown)
	return previous
}

const (
	userReason        = "User initiated"
	spotReclaimReason = "Service initiated"
	blockEndReason    = "Capacity Block expired"
)

func decodeUserData(b64 string) string {
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return b64 // user data that is not base64 is passed on as given
	}
	return string(b)
}

// visible reports whether Describe calls see the instance yet.
func (in *instance) visible(now time.Time) bool { return !now.Before(in.visibleAt) }

// SetVisibilityDelay makes instances launched from now on invisible to
// Describe calls for d, as EC2's eventual consistency sometimes does.
func (s *Service) SetVisibilityDelay(d time.Duration) {
	s.mu.Lock()
	s.visibilityDelay = d
	s.mu.Unlock()
}

// EphemeralGiB is the size of the volume an instance's kubelet keeps pods'
// storage on: Bottlerocket's data volume, else the root volume; 0 when the
// instance or the volume is unknown.
func (s *Service) EphemeralGiB(instanceID string) int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[instanceID]
	if !ok {
		return 0
	}
	device := deref(in.RootDeviceName)
	if im := s.imageByID(deref(in.ImageId)); im != nil && im.release.Family == "bottlerocket" {
		device = BottlerocketDataDevice
	}
	for _, v := range in.volumes {
		if v.device == device {
			return v.sizeGiB
		}
	}
	return 0
}

// Instance returns a copy of an instance and its decoded user data.
func (s *Service) Instance(id string) (ec2types.Instance, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.instances[id]
	if !ok {
		return ec2types.Instance{}, "", false
	}
	return in.Instance, decodeUserData(in.userData), true
}
