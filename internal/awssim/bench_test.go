package awssim_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// BenchmarkDescribeInstances measures DescribeInstances round trips through
// the SDK on loopback: one instance by ID (a NodeClaim lookup) and the 20
// instances of a node pool by tag (garbage collection's listing). Most of
// the time goes to the SDK parsing the XML.
func BenchmarkDescribeInstances(b *testing.B) {
	s := start(b, awssim.Options{})
	client := ec2.NewFromConfig(s.AWSConfig())
	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Filters: []ec2types.Filter{{Name: aws.String("name"), Values: []string{"amazon-eks-node-al2023-x86_64-standard-*"}}}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := client.RunInstances(ctx, &ec2.RunInstancesInput{
		ImageId: images.Images[0].ImageId, InstanceType: "m5.large", MinCount: aws.Int32(20), MaxCount: aws.Int32(20),
		TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/nodepool"), Value: aws.String("default")}}}},
	}); err != nil {
		b.Fatal(err)
	}
	run, err := client.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: images.Images[0].ImageId, InstanceType: "m5.large", MinCount: aws.Int32(1), MaxCount: aws.Int32(1)})
	if err != nil {
		b.Fatal(err)
	}
	byID := &ec2.DescribeInstancesInput{InstanceIds: []string{*run.Instances[0].InstanceId}}
	list := &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag-key"), Values: []string{"karpenter.sh/nodepool"}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running", "stopping", "stopped", "shutting-down"}},
	}}
	for _, c := range []struct {
		name      string
		in        *ec2.DescribeInstancesInput
		instances int
	}{{"one-by-id", byID, 1}, {"twenty-by-tag", list, 20}} {
		b.Run(c.name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				out, err := client.DescribeInstances(ctx, c.in)
				if err != nil || len(out.Reservations[0].Instances) != c.instances {
					b.Fatal(out, err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := client.DescribeInstances(ctx, c.in); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
		})
	}
}
