package ec2_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

// TestCopyImageAndDeprecateTheCopy is how Karpenter's e2e suites make a
// deprecated image: copy an EKS image with discovery tags, deprecate the
// copy, and find it again by its tags with IncludeDeprecated.
func TestCopyImageAndDeprecateTheCopy(t *testing.T) {
	s, client, _ := newEC2(t, sim.Options{})
	src := s.Images()[0]
	copied, err := client.CopyImage(ctx, &ec2.CopyImageInput{
		SourceImageId: aws.String(src.ImageID), SourceRegion: aws.String("us-west-2"), Name: aws.String("deprecated-" + src.ImageID),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeImage,
			Tags: []ec2types.Tag{{Key: aws.String("amiFamily"), Value: aws.String("AL2023")}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour)
	dep, err := client.EnableImageDeprecation(ctx, &ec2.EnableImageDeprecationInput{ImageId: copied.ImageId, DeprecateAt: &at})
	if err != nil || !*dep.Return {
		t.Fatalf("EnableImageDeprecation: %v %v", dep, err)
	}
	found, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{IncludeDeprecated: aws.Bool(true),
		Filters: []ec2types.Filter{filter("tag:amiFamily", "AL2023")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(found.Images) != 1 || *found.Images[0].ImageId != *copied.ImageId {
		t.Fatalf("tag filter finds %v, want the copy %s", found.Images, *copied.ImageId)
	}
	im := found.Images[0]
	if *im.OwnerId != "123456789012" || *im.Public || im.Architecture != ec2types.ArchitectureValues(src.Architecture) ||
		*im.DeprecationTime != at.UTC().Truncate(time.Minute).Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("copy = owner %s public %v arch %s deprecated %s", *im.OwnerId, *im.Public, im.Architecture, *im.DeprecationTime)
	}
	own, _ := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}})
	if len(own.Images) != 1 {
		t.Errorf("Owners self lists %d images, want the copy", len(own.Images))
	}
	// A copy is no EKS release: the family's newest stays the source.
	for _, r := range s.Images() {
		if r.ImageID == *copied.ImageId {
			t.Errorf("the copy is listed as a release: %+v", r)
		}
	}
	_, err = client.EnableImageDeprecation(ctx, &ec2.EnableImageDeprecationInput{ImageId: aws.String(src.ImageID), DeprecateAt: &at})
	if code := apiCode(t, err); code != "AuthFailure" {
		t.Errorf("deprecating Amazon's image: %s", code)
	}
}
