package ec2_test

import (
	"encoding/base64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// world holds IDs from the seeded world that launches need.
type world struct {
	al2023x86, al2023arm string
	subnets              map[string]string // zone -> discovered subnet
	groups               []string
}

func discover(t *testing.T, client *ec2.Client) world {
	t.Helper()
	w := world{subnets: map[string]string{}}
	for arch, into := range map[string]*string{"x86_64": &w.al2023x86, "arm64": &w.al2023arm} {
		out, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"amazon"}, Filters: []ec2types.Filter{
			filter("name", "amazon-eks-node-al2023-"+arch+"-standard-1.36-*"),
		}})
		if err != nil || len(out.Images) != 1 {
			t.Fatalf("AL2023 %s image: %v %v", arch, out, err)
		}
		*into = *out.Images[0].ImageId
	}
	subnets, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subnets.Subnets {
		w.subnets[*s.AvailabilityZone] = *s.SubnetId
	}
	groups, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.SecurityGroups {
		w.groups = append(w.groups, *g.GroupId)
	}
	return w
}

func createTemplate(t *testing.T, client *ec2.Client, name, image string, groups []string, userData string) string {
	t.Helper()
	out, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{
			ImageId: aws.String(image), SecurityGroupIds: groups,
			UserData:           aws.String(base64.StdEncoding.EncodeToString([]byte(userData))),
			IamInstanceProfile: &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String("test-cluster-node")},
			MetadataOptions: &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
				HttpTokens: ec2types.LaunchTemplateHttpTokensStateRequired, HttpPutResponseHopLimit: aws.Int32(1),
			},
			TagSpecifications: []ec2types.LaunchTemplateTagSpecificationRequest{{
				ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}},
			}},
		},
		TagSpecifications: []ec2types.TagSpecification{{
			ResourceType: ec2types.ResourceTypeLaunchTemplate,
			Tags:         []ec2types.Tag{{Key: aws.String("kubernetes.io/cluster/test-cluster"), Value: aws.String("owned")}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return *out.LaunchTemplate.LaunchTemplateId
}

func TestLaunchTemplatesCreateDescribeDelete(t *testing.T) {
	svc, client, _ := newEC2(t, sim.Options{})
	w := discover(t, client)
	id := createTemplate(t, client, "karpenter.k8s.aws/abc", w.al2023x86, w.groups, "#!/bin/bash\necho hi")
	data, ok := svc.LaunchTemplateData("karpenter.k8s.aws/abc")
	if !ok || base64Decode(t, *data.UserData) != "#!/bin/bash\necho hi" || data.MetadataOptions.HttpTokens != "required" {
		t.Fatalf("stored template data = %+v", data)
	}

	_, err := client.CreateLaunchTemplate(ctx, &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String("karpenter.k8s.aws/abc"),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String(w.al2023x86)},
	})
	if code := apiCode(t, err); code != "InvalidLaunchTemplateName.AlreadyExistsException" {
		t.Errorf("duplicate name: %s", code)
	}

	byTag, err := client.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{Filters: []ec2types.Filter{filter("tag:kubernetes.io/cluster/test-cluster", "owned")}})
	if err != nil || len(byTag.LaunchTemplates) != 1 || *byTag.LaunchTemplates[0].LaunchTemplateId != id {
		t.Fatalf("describe by tag: %+v %v", byTag, err)
	}
	if lt := byTag.LaunchTemplates[0]; *lt.LatestVersionNumber != 1 || lt.CreateTime == nil || len(lt.Tags) != 1 {
		t.Errorf("template metadata: %+v", lt)
	}
	_, err = client.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{LaunchTemplateNames: []string{"missing"}})
	if code := apiCode(t, err); code != "InvalidLaunchTemplateName.NotFoundException" {
		t.Errorf("missing name: %s", code)
	}

	if _, err := client.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)}); err != nil {
		t.Fatal(err)
	}
	_, err = client.DeleteLaunchTemplate(ctx, &ec2.DeleteLaunchTemplateInput{LaunchTemplateId: aws.String(id)})
	if code := apiCode(t, err); code != "InvalidLaunchTemplateId.NotFound" {
		t.Errorf("second delete: %s", code)
	}
}

func base64Decode(t *testing.T, s string) string {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
