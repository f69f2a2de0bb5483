package aws_test

import (
	"fmt"
	"strings"
	"testing"

	sdkaws "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

// TestNodeClassFieldsReachTheLaunch launches one claim of a node class that
// sets the EC2NodeClass fields shaping a launch and reads them back from
// the CreateLaunchTemplate request EC2 received, the instance EC2 started
// and the user data it got; context reaches the CreateFleet request.
func TestNodeClassFieldsReachTheLaunch(t *testing.T) {
	ctx := testContext(t)
	nc := testenv.NodeClass("launch-fields", cluster, "al2023@latest")
	nc.Spec.AssociatePublicIPAddress = sdkaws.Bool(false)
	nc.Spec.DetailedMonitoring = sdkaws.Bool(true)
	nc.Spec.MetadataOptions = &awsv1.MetadataOptions{HTTPTokens: sdkaws.String("optional"), HTTPPutResponseHopLimit: sdkaws.Int64(2)}
	raid0 := awsv1.InstanceStorePolicyRAID0
	nc.Spec.InstanceStorePolicy = &raid0
	size := resource.MustParse("50Gi")
	nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{{
		DeviceName: sdkaws.String("/dev/xvda"), RootVolume: true,
		EBS: &awsv1.BlockDevice{VolumeSize: &size, VolumeType: sdkaws.String("gp3"), IOPS: sdkaws.Int64(4000), Encrypted: sdkaws.Bool(true)},
	}}
	nc.Spec.Tags = map[string]string{"team": "launch-fields", "cost-center": "42"}
	nc.Spec.Context = sdkaws.String("ctx-launch-fields")
	nc.Spec.ConnectionTracking = &awsv1.ConnectionTracking{TCPEstablishedTimeout: sdkaws.Int32(3600)}
	nc.Spec.EnclaveOptions = &awsv1.EnclaveOptions{Enabled: true}
	nc.Spec.CPUOptions = &awsv1.CPUOptions{NestedVirtualization: sdkaws.String("enabled")}
	nc = readyNodeClass(t, prov, nc)

	before := len(sim.Requests().Requests("ec2", "CreateLaunchTemplate"))
	fleetsBefore := len(sim.Requests().Requests("ec2", "CreateFleet"))
	claim := testenv.NodeClaim("launch-fields", "general", nc.Name,
		testenv.In(corev1.LabelInstanceTypeStable, "m8id.xlarge"), testenv.In(v1.CapacityTypeLabelKey, v1.CapacityTypeOnDemand))
	got, err := prov.Create(ctx, claim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prov.Delete(ctx, got) })

	var params map[string]any
	for _, r := range sim.Requests().Requests("ec2", "CreateLaunchTemplate")[before:] {
		if r.Status == 200 {
			params = r.Parameters
		}
	}
	if params == nil {
		t.Fatal("no CreateLaunchTemplate for the node class")
	}
	want := map[string]string{
		"LaunchTemplateData.NetworkInterface.1.DeviceIndex":                                           "0",
		"LaunchTemplateData.NetworkInterface.1.AssociatePublicIpAddress":                              "false",
		"LaunchTemplateData.NetworkInterface.1.ConnectionTrackingSpecification.TcpEstablishedTimeout": "3600",
		"LaunchTemplateData.Monitoring.Enabled":                                                       "true",
		"LaunchTemplateData.EnclaveOptions.Enabled":                                                   "true",
		"LaunchTemplateData.CpuOptions.NestedVirtualization":                                          "enabled",
		"LaunchTemplateData.MetadataOptions.HttpTokens":                                               "optional",
		"LaunchTemplateData.MetadataOptions.HttpPutResponseHopLimit":                                  "2",
		"LaunchTemplateData.MetadataOptions.HttpEndpoint":                                             "enabled",
		"LaunchTemplateData.BlockDeviceMapping.1.DeviceName":                                          "/dev/xvda",
		"LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeSize":                                      "50",
		"LaunchTemplateData.BlockDeviceMapping.1.Ebs.VolumeType":                                      "gp3",
		"LaunchTemplateData.BlockDeviceMapping.1.Ebs.Iops":                                            "4000",
		"LaunchTemplateData.BlockDeviceMapping.1.Ebs.Encrypted":                                       "true",
	}
	for k, v := range want {
		if g := fmt.Sprint(params[k]); g != v {
			t.Errorf("CreateLaunchTemplate %s = %q, want %q", k, g, v)
		}
	}
	fleets := sim.Requests().Requests("ec2", "CreateFleet")[fleetsBefore:]
	if len(fleets) != 1 || fmt.Sprint(fleets[0].Parameters["Context"]) != "ctx-launch-fields" {
		t.Errorf("CreateFleet requests %v, want one with Context ctx-launch-fields", fleets)
	}
	if _, ok := params["LaunchTemplateData.SecurityGroupId.1"]; ok {
		t.Errorf("security groups on the template as well as on its interface: %v", params)
	}

	id := got.Status.ProviderID[strings.LastIndex(got.Status.ProviderID, "/")+1:]
	out, err := ec2.NewFromConfig(sim.Config).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	inst := out.Reservations[0].Instances[0]
	tags := map[string]string{}
	for _, tag := range inst.Tags {
		tags[sdkaws.ToString(tag.Key)] = sdkaws.ToString(tag.Value)
	}
	if tags["team"] != "launch-fields" || tags["cost-center"] != "42" {
		t.Errorf("instance tags %v lack the node class's tags", tags)
	}
	if m := inst.MetadataOptions; m == nil || m.HttpTokens != "optional" || sdkaws.ToInt32(m.HttpPutResponseHopLimit) != 2 {
		t.Errorf("instance metadata options %+v, want tokens optional, hop limit 2", m)
	}
	if _, ud, _ := sim.EC2.Instance(id); !strings.Contains(ud, "RAID0") {
		t.Errorf("instanceStorePolicy RAID0 is not in the user data:\n%s", ud)
	}
	if eph := got.Status.Capacity[corev1.ResourceEphemeralStorage]; eph.Value() < 45<<30 {
		t.Errorf("ephemeral-storage %s, want about the 50Gi root volume", eph.String())
	}
}
