package ec2_test

import (
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// An instance gets its image's volumes with the launch's block device
// mappings applied (a size replaces the image's, a new device adds a
// volume, NoDevice drops one), lists them as DescribeInstances does, and
// its kubelet keeps pods' storage on the root volume (Bottlerocket: the
// data volume).
func TestLaunchVolumes(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	image := func(name string) string {
		out, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{filter("name", name)}})
		if err != nil || len(out.Images) == 0 {
			t.Fatalf("image %s: %v", name, err)
		}
		return *out.Images[0].ImageId
	}
	launch := func(imageID string, bdms ...ec2types.BlockDeviceMapping) ec2types.Instance {
		out, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
			ImageId: aws.String(imageID), InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			SubnetId: aws.String(w.subnets["us-west-2a"]), SecurityGroupIds: w.groups, BlockDeviceMappings: bdms,
		})
		if err != nil {
			t.Fatal(err)
		}
		return out.Instances[0]
	}
	ebs := func(dev string, size int32) ec2types.BlockDeviceMapping {
		return ec2types.BlockDeviceMapping{DeviceName: aws.String(dev), Ebs: &ec2types.EbsBlockDevice{VolumeSize: aws.Int32(size), VolumeType: ec2types.VolumeTypeGp3}}
	}
	devices := func(in ec2types.Instance) []string {
		var out []string
		for _, m := range in.BlockDeviceMappings {
			if m.Ebs == nil || aws.ToString(m.Ebs.VolumeId) == "" {
				t.Errorf("mapping %s of %s has no volume", aws.ToString(m.DeviceName), aws.ToString(in.InstanceId))
			}
			out = append(out, aws.ToString(m.DeviceName))
		}
		return out
	}
	for _, tc := range []struct {
		name, image string
		bdms        []ec2types.BlockDeviceMapping
		root        string
		devices     []string
		ephemeral   int32
	}{
		{"al2023 as imaged", w.al2023x86, nil, "/dev/xvda", []string{"/dev/xvda"}, 20},
		{"al2023 with a 100GiB root and a data volume", w.al2023x86, []ec2types.BlockDeviceMapping{ebs("/dev/xvda", 100), ebs("/dev/xvdf", 500)}, "/dev/xvda", []string{"/dev/xvda", "/dev/xvdf"}, 100},
		{"windows as imaged", image("Windows_Server-2022-English-Core-EKS_Optimized-*"), nil, "/dev/sda1", []string{"/dev/sda1"}, 50},
		{"bottlerocket with a 60GiB data volume", image("bottlerocket-aws-k8s-*-x86_64-*"), []ec2types.BlockDeviceMapping{ebs("/dev/xvda", 4), ebs("/dev/xvdb", 60)}, "/dev/xvda", []string{"/dev/xvda", "/dev/xvdb"}, 60},
		{"bottlerocket's data volume dropped", image("bottlerocket-aws-k8s-*-x86_64-*"), []ec2types.BlockDeviceMapping{{DeviceName: aws.String("/dev/xvdb"), NoDevice: aws.String("")}}, "/dev/xvda", []string{"/dev/xvda"}, 0},
	} {
		in := launch(tc.image, tc.bdms...)
		described, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{*in.InstanceId}})
		if err != nil {
			t.Fatal(err)
		}
		got := described.Reservations[0].Instances[0]
		if aws.ToString(got.RootDeviceName) != tc.root || !slices.Equal(devices(got), tc.devices) {
			t.Errorf("%s: root %s, devices %v; want %s, %v", tc.name, aws.ToString(got.RootDeviceName), devices(got), tc.root, tc.devices)
		}
		if e := svc.EphemeralGiB(*in.InstanceId); e != tc.ephemeral {
			t.Errorf("%s: ephemeral storage on %d GiB, want %d", tc.name, e, tc.ephemeral)
		}
	}
}
