package ami_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/ami"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

var sim *testenv.Sim

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if sim, err = testenv.Start(awssim.Options{ClusterName: "ami"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	return m.Run()
}

func k8s(context.Context) (string, error) { return sim.Options().KubernetesVersion, nil }

// Every AMI refresh describes the images again, but the SSM parameters
// behind a pinned alias are read once (they never change), and a user's
// ssmParameter once per CustomSSMCacheTTL.
func TestPinnedAndCustomParametersAreReadOncePerTTL(t *testing.T) {
	ctx := context.Background()
	// A refresh interval so short that every List resolves again.
	p := ami.New(ec2.NewFromConfig(sim.Config), ssm.NewFromConfig(sim.Config), k8s, time.Nanosecond)
	// A user's parameter (here one EKS publishes).
	custom := fmt.Sprintf("/aws/service/eks/optimized-ami/%s/amazon-linux-2023/x86_64/standard/recommended/image_id", sim.Options().KubernetesVersion)
	var version string
	for _, r := range sim.EC2.Images() {
		if r.Family == "al2023" {
			version = r.Version
		}
	}
	classes := []*awsv1.EC2NodeClass{
		testenv.NodeClass("pinned", "ami", "al2023@"+version),
		{Spec: awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{SSMParameter: custom}}}},
	}
	list := func() {
		t.Helper()
		for _, nc := range classes {
			amis, err := p.List(ctx, nc)
			if err != nil || len(amis) == 0 {
				t.Fatalf("List(%v) = %v, %v", nc.Spec.AMISelectorTerms, amis, err)
			}
		}
	}
	// An alias reads its parameters with GetParameters, an ssmParameter
	// term with GetParameter.
	reads := func() int {
		return sim.Requests().Count("ssm", "GetParameter") + sim.Requests().Count("ssm", "GetParameters")
	}
	params, images := reads(), sim.Requests().Count("ec2", "DescribeImages")
	list()
	first := reads() - params
	if first == 0 {
		t.Fatal("the first resolution read no SSM parameter")
	}
	for range 5 {
		list()
	}
	if n := reads() - params; n != first {
		t.Errorf("6 resolutions read %d SSM parameters, want %d (the first resolution's)", n, first)
	}
	if n := sim.Requests().Count("ec2", "DescribeImages") - images; n < 6*len(classes) {
		t.Errorf("6 resolutions described images %d times, want at least %d (the refresh is not cached away)", n, 6*len(classes))
	}
}
