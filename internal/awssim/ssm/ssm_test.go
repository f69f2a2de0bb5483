package ssm_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsssm "github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/clienttest"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/ssm"
)

func TestGetParameterServesPublishedAMIs(t *testing.T) {
	svc := ssm.New("us-west-2")
	paths, err := ssm.AMIParameters("1.36", "al2023", "arm64", "standard", "amazon-eks-node-al2023-arm64-standard-1.36-v20261101", "v20261101")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		svc.Put(p, "ami-0123456789abcdef0")
	}
	client := awsssm.NewFromConfig(clienttest.Config(t, svc))
	ctx := context.Background()
	out, err := client.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/standard/recommended/image_id")})
	if err != nil {
		t.Fatal(err)
	}
	if *out.Parameter.Value != "ami-0123456789abcdef0" || out.Parameter.Version != 1 || out.Parameter.LastModifiedDate == nil || out.Parameter.Type != ssmtypes.ParameterTypeString {
		t.Errorf("parameter = %+v", out.Parameter)
	}
	svc.Put(paths[0], "ami-0fedcba9876543210")
	out, _ = client.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String(paths[0])})
	if *out.Parameter.Value != "ami-0fedcba9876543210" || out.Parameter.Version != 2 {
		t.Errorf("republished parameter = %s v%d", *out.Parameter.Value, out.Parameter.Version)
	}
	_, err = client.GetParameter(ctx, &awsssm.GetParameterInput{Name: aws.String("/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/arm64/neuron/recommended/image_id")})
	var nf *ssmtypes.ParameterNotFound
	if !errors.As(err, &nf) {
		t.Errorf("missing parameter: %v, want the SDK's ParameterNotFound", err)
	}
	many, err := client.GetParameters(ctx, &awsssm.GetParametersInput{Names: []string{paths[1], "/nope"}})
	if err != nil || len(many.Parameters) != 1 || len(many.InvalidParameters) != 1 {
		t.Errorf("GetParameters = %+v %v", many, err)
	}
}

func TestAMIParameterPathsFollowEKSConventions(t *testing.T) {
	cases := []struct {
		family, arch, variant, name, version, want string
	}{
		{"al2", "x86_64", "nvidia", "amazon-eks-gpu-node-1.36-v20261101", "v20261101", "/aws/service/eks/optimized-ami/1.36/amazon-linux-2-gpu/recommended/image_id"},
		{"al2", "arm64", "standard", "amazon-eks-arm64-node-1.36-v20261101", "v20261101", "/aws/service/eks/optimized-ami/1.36/amazon-linux-2-arm64/amazon-eks-arm64-node-1.36-v20261101/image_id"},
		{"bottlerocket", "x86_64", "nvidia", "", "1.50.0", "/aws/service/bottlerocket/aws-k8s-1.36-nvidia/x86_64/latest/image_id"},
		{"bottlerocket", "arm64", "standard", "", "1.50.0", "/aws/service/bottlerocket/aws-k8s-1.36/arm64/1.50.0/image_id"},
		{"al2023", "x86_64", "neuron", "amazon-eks-node-al2023-x86_64-neuron-1.36-v20261101", "v20261101", "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/neuron/recommended/image_id"},
	}
	for _, c := range cases {
		paths, err := ssm.AMIParameters("1.36", c.family, c.arch, c.variant, c.name, c.version)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range paths {
			found = found || p == c.want
		}
		if !found {
			t.Errorf("%s/%s/%s: %v lacks %s", c.family, c.arch, c.variant, paths, c.want)
		}
	}
	if paths, err := ssm.AMIParameters("1.36", "windows2022", "x86_64", "standard", "", ""); err != nil ||
		len(paths) != 1 || paths[0] != "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-1.36/image_id" {
		t.Errorf("windows2022 parameters = %v, %v", paths, err)
	}
	if _, err := ssm.AMIParameters("1.36", "windows2012", "x86_64", "standard", "", ""); err == nil {
		t.Error("unknown family accepted")
	}
	if _, err := ssm.AMIParameters("1.36", "bottlerocket", "x86_64", "neuron", "", "1.50.0"); err == nil {
		t.Error("a Neuron variant outside AL2023 accepted")
	}
}

func TestGetParametersByPathListsOneLevelOrAllBelow(t *testing.T) {
	svc := ssm.New("us-west-2")
	base := "/aws/service/eks/optimized-ami/1.36/amazon-linux-2023/x86_64/"
	for _, v := range []string{"standard", "nvidia", "neuron"} {
		svc.Put(base+v+"/recommended/image_id", "ami-"+v)
		svc.Put(base+v+"/recommended/release_version", "1.36.0-20261101")
	}
	svc.Put(base+"top", "x")
	client := awsssm.NewFromConfig(clienttest.Config(t, svc))
	ctx := context.Background()
	list := func(in *awsssm.GetParametersByPathInput) []string {
		t.Helper()
		var names []string
		p := awsssm.NewGetParametersByPathPaginator(client, in)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, prm := range page.Parameters {
				names = append(names, *prm.Name)
			}
		}
		return names
	}
	if got := list(&awsssm.GetParametersByPathInput{Path: aws.String(base)}); len(got) != 1 || got[0] != base+"top" {
		t.Errorf("one level under %s = %v, want only %stop", base, got, base)
	}
	all := list(&awsssm.GetParametersByPathInput{Path: aws.String(strings.TrimSuffix(base, "/")), Recursive: aws.Bool(true), MaxResults: aws.Int32(2)})
	if len(all) != 7 || !slices.IsSorted(all) {
		t.Errorf("recursively, two a page = %v, want all 7 in name order", all)
	}
	typed := list(&awsssm.GetParametersByPathInput{Path: aws.String(base), Recursive: aws.Bool(true),
		ParameterFilters: []ssmtypes.ParameterStringFilter{{Key: aws.String("Type"), Values: []string{"SecureString"}}}})
	if len(typed) != 0 {
		t.Errorf("SecureString parameters = %v, want none", typed)
	}
	_, err := client.GetParametersByPath(ctx, &awsssm.GetParametersByPathInput{Path: aws.String(base),
		ParameterFilters: []ssmtypes.ParameterStringFilter{{Key: aws.String("Name"), Values: []string{"x"}}}})
	var bad *ssmtypes.InvalidFilterKey
	if !errors.As(err, &bad) {
		t.Errorf("filter on Name: %v, want InvalidFilterKey", err)
	}
	if _, err := client.GetParametersByPath(ctx, &awsssm.GetParametersByPathInput{Path: aws.String("aws/service")}); err == nil {
		t.Error("a path without a leading slash was accepted")
	}
}
