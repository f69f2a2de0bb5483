package ec2_test

import (
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	sim "github.com/joistdev/terraform-provider-joist/internal/awssim/ec2"
)

func TestDescribeInstanceTypesRoundTripsTheCatalogThroughTheSDK(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	var got []ec2types.InstanceTypeInfo
	p := ec2.NewDescribeInstanceTypesPaginator(client, &ec2.DescribeInstanceTypesInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.InstanceTypes) > 100 {
			t.Fatalf("page of %d types, EC2 pages at most 100", len(page.InstanceTypes))
		}
		got = append(got, page.InstanceTypes...)
	}
	if len(got) != 1331 {
		t.Fatalf("DescribeInstanceTypes returned %d types, want the 1,331 offered in us-west-2", len(got))
	}
	cat := catalog.MustLoad()
	for _, it := range got {
		want, _ := cat.InstanceType(string(it.InstanceType))
		if !reflect.DeepEqual(&it, want) {
			t.Fatalf("%s did not survive the wire:\n got %+v\nwant %+v", it.InstanceType, it, *want)
		}
	}

	arm, err := client.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{
		InstanceTypes: []ec2types.InstanceType{"m7g.large", "m5.large", "c6g.xlarge"},
		Filters:       []ec2types.Filter{filter("processor-info.supported-architecture", "arm64"), filter("supported-virtualization-type", "hvm")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, it := range arm.InstanceTypes {
		names = append(names, string(it.InstanceType))
	}
	if !reflect.DeepEqual(names, []string{"c6g.xlarge", "m7g.large"}) {
		t.Errorf("arm64 filter gave %v", names)
	}
	_, err = client.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{Filters: []ec2types.Filter{filter("no-such-filter", "x")}})
	if code := apiCode(t, err); code != "InvalidParameterValue" {
		t.Errorf("unknown filter: code %s", code)
	}
	_, err = client.DescribeInstanceTypes(ctx, &ec2.DescribeInstanceTypesInput{InstanceTypes: []ec2types.InstanceType{"m99.huge"}})
	if code := apiCode(t, err); code != "InvalidInstanceType" {
		t.Errorf("unknown type: code %s", code)
	}
}

func TestDescribeInstanceTypeOfferingsPerZoneAndZoneID(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	count := func(lt ec2types.LocationType, filters ...ec2types.Filter) map[string]int {
		out := map[string]int{}
		p := ec2.NewDescribeInstanceTypeOfferingsPaginator(client, &ec2.DescribeInstanceTypeOfferingsInput{LocationType: lt, Filters: filters})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range page.InstanceTypeOfferings {
				out[*o.Location]++
			}
		}
		return out
	}
	byZone := count(ec2types.LocationTypeAvailabilityZone)
	want := map[string]int{"us-west-2a": 1312, "us-west-2b": 1319, "us-west-2c": 1306, "us-west-2d": 1024}
	if !reflect.DeepEqual(byZone, want) {
		t.Errorf("offerings per zone = %v, want %v", byZone, want)
	}
	if got := count(ec2types.LocationTypeAvailabilityZoneId)["usw2-az4"]; got != 1024 {
		t.Errorf("usw2-az4 (us-west-2d) offers %d types, want 1,024", got)
	}
	m5 := count(ec2types.LocationTypeAvailabilityZone, filter("instance-type", "m5.large"), filter("location", "us-west-2a", "us-west-2b"))
	if !reflect.DeepEqual(m5, map[string]int{"us-west-2a": 1, "us-west-2b": 1}) {
		t.Errorf("m5.large in 2a/2b = %v", m5)
	}
	if got := count(ec2types.LocationTypeRegion)["us-west-2"]; got != 1331 {
		t.Errorf("region offers %d types, want 1,331", got)
	}
}

func TestDescribeZonesSubnetsGroupsAndImages(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	azs, err := client.DescribeAvailabilityZones(ctx, &ec2.DescribeAvailabilityZonesInput{})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	for _, z := range azs.AvailabilityZones {
		ids[*z.ZoneName] = *z.ZoneId
	}
	if !reflect.DeepEqual(ids, map[string]string{"us-west-2a": "usw2-az2", "us-west-2b": "usw2-az1", "us-west-2c": "usw2-az3", "us-west-2d": "usw2-az4"}) {
		t.Errorf("zones = %v", ids)
	}

	discovered, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	zones := map[string]bool{}
	for _, s := range discovered.Subnets {
		zones[*s.AvailabilityZone] = true
		if *s.AvailableIpAddressCount != 8187 || *s.MapPublicIpOnLaunch {
			t.Errorf("private subnet %s: %d free IPs, public=%v", *s.SubnetId, *s.AvailableIpAddressCount, *s.MapPublicIpOnLaunch)
		}
	}
	if len(discovered.Subnets) != 4 || len(zones) != 4 {
		t.Errorf("discovery tag selects %d subnets in %d zones, want one private subnet per zone", len(discovered.Subnets), len(zones))
	}
	// Subnets carry eksctl's Name tags: Karpenter's e2e suites select the
	// private ones by Name "*Private*".
	named, err := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag:Name", "*Private*")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(named.Subnets) != 4 || !reflect.DeepEqual(subnetIDs(named.Subnets), subnetIDs(discovered.Subnets)) {
		t.Fatalf("Name *Private* selects %v, want the private subnets %v", subnetIDs(named.Subnets), subnetIDs(discovered.Subnets))
	}
	if name := tagValue(named.Subnets[0].Tags, "Name"); name != "eksctl-test-cluster-cluster/SubnetPrivateUSWEST2A" {
		t.Errorf("first private subnet's Name = %q, want eksctl's", name)
	}
	all, _ := client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []ec2types.Filter{filter("tag-key", "kubernetes.io/role/*")}})
	if len(all.Subnets) != 8 {
		t.Errorf("tag-key wildcard selects %d subnets, want 8", len(all.Subnets))
	}
	_, err = client.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-0123456789abcdef0"}})
	if code := apiCode(t, err); code != "InvalidSubnetID.NotFound" {
		t.Errorf("unknown subnet: %s", code)
	}

	sgs, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{filter("tag:karpenter.sh/discovery", "test-cluster")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sgs.SecurityGroups) != 2 {
		t.Fatalf("discovery tag selects %d security groups, want the cluster and node groups", len(sgs.SecurityGroups))
	}
	byName, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupNames: []string{"test-cluster-node"}})
	if err != nil || len(byName.SecurityGroups) != 1 {
		t.Fatalf("by name: %v %v", byName, err)
	}
	byID, err := client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{*byName.SecurityGroups[0].GroupId}})
	if err != nil || *byID.SecurityGroups[0].GroupName != "test-cluster-node" {
		t.Fatalf("by id: %v %v", byID, err)
	}
	_, err = client.DescribeSecurityGroups(ctx, &ec2.DescribeSecurityGroupsInput{GroupIds: []string{"sg-0000000000000000"}})
	if code := apiCode(t, err); code != "InvalidGroup.NotFound" {
		t.Errorf("unknown group: %s", code)
	}

	images, err := client.DescribeImages(ctx, &ec2.DescribeImagesInput{
		Owners:  []string{"amazon"},
		Filters: []ec2types.Filter{filter("name", "amazon-eks-node-al2023-*-standard-1.36-*"), filter("architecture", "arm64")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(images.Images) != 1 || images.Images[0].Architecture != ec2types.ArchitectureValuesArm64 {
		t.Fatalf("AL2023 arm64 standard images: %+v", images.Images)
	}
	self, _ := client.DescribeImages(ctx, &ec2.DescribeImagesInput{Owners: []string{"self"}})
	if len(self.Images) != 0 {
		t.Errorf("owner self lists %d images; the account owns none", len(self.Images))
	}
	_, err = client.DescribeImages(ctx, &ec2.DescribeImagesInput{ImageIds: []string{"ami-00000000000000000"}})
	if code := apiCode(t, err); code != "InvalidAMIID.NotFound" {
		t.Errorf("unknown image: %s", code)
	}
}

func TestSpotPriceHistoryCoversEveryPool(t *testing.T) {
	_, client, _ := newEC2(t, sim.Options{})
	var prices []ec2types.SpotPrice
	p := ec2.NewDescribeSpotPriceHistoryPaginator(client, &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX"},
		InstanceTypes:       []ec2types.InstanceType{"m5.large", "c7g.xlarge"},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		prices = append(prices, page.SpotPriceHistory...)
	}
	if len(prices) != 8 {
		t.Fatalf("%d prices for 2 types in 4 zones", len(prices))
	}
	cat := catalog.MustLoad()
	for _, sp := range prices {
		want, _ := cat.SpotPrice("us-west-2", *sp.AvailabilityZone, string(sp.InstanceType))
		if got := aws.ToString(sp.SpotPrice); got == "" || mustFloat(t, got) != want {
			t.Errorf("%s in %s: %s, catalog says %v", sp.InstanceType, *sp.AvailabilityZone, got, want)
		}
	}
	// EC2's model leaves MaxResults unbounded here; Karpenter asks for
	// 2,000 and gets pages of at most 1,000.
	all := 0
	p = ec2.NewDescribeSpotPriceHistoryPaginator(client, &ec2.DescribeSpotPriceHistoryInput{ProductDescriptions: []string{"Linux/UNIX"}, MaxResults: aws.Int32(2000)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.SpotPriceHistory) > 1000 {
			t.Errorf("a page of %d prices", len(page.SpotPriceHistory))
		}
		all += len(page.SpotPriceHistory)
	}
	if all < 4000 {
		t.Errorf("only %d spot prices for the whole region", all)
	}
}

func subnetIDs(subnets []ec2types.Subnet) []string {
	var ids []string
	for _, s := range subnets {
		ids = append(ids, *s.SubnetId)
	}
	return ids
}

func tagValue(tags []ec2types.Tag, key string) string {
	for _, t := range tags {
		if *t.Key == key {
			return *t.Value
		}
	}
	return ""
}
