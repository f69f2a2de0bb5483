package ec2_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// TestCreateAndDeleteSecurityGroup: a group created in the cluster's VPC
// with discovery tags is found by them (Karpenter's drift suite adds one so),
// a second group of the same name is refused, and deleting it removes it.
func TestCreateAndDeleteSecurityGroup(t *testing.T) {
	s, client, _ := newEC2(t, sim.Options{})
	vpc := s.Network().VpcID
	created, err := client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{
		GroupName: aws.String("security-group-drift"), Description: aws.String("drift"), VpcId: aws.String(vpc),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSecurityGroup,
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/discovery"), Value: aws.String("test-cluster")}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	found, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.SecurityGroups) != 3 || *found.SecurityGroups[2].GroupId != *created.GroupId || *found.SecurityGroups[2].VpcId != vpc {
		t.Fatalf("discovery finds %+v, want the two seeded groups and %s", found.SecurityGroups, *created.GroupId)
	}
	_, err = client.CreateSecurityGroup(ctx, &ec2.CreateSecurityGroupInput{GroupName: aws.String("security-group-drift"), Description: aws.String("again")})
	if code := apiCode(t, err); code != "InvalidGroup.Duplicate" {
		t.Errorf("duplicate name: %s", code)
	}
	if _, err := client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: created.GroupId}); err != nil {
		t.Fatal(err)
	}
	_, err = client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{*created.GroupId}})
	if code := apiCode(t, err); code != "InvalidGroup.NotFound" {
		t.Errorf("deleted group: %s", code)
	}
	_, err = client.DeleteSecurityGroup(ctx, &ec2.DeleteSecurityGroupInput{GroupId: created.GroupId})
	if code := apiCode(t, err); code != "InvalidGroup.NotFound" {
		t.Errorf("deleting it again: %s", code)
	}
}
