package instanceprofile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instanceprofile"
	"github.com/joistdev/terraform-provider-joist/internal/testenv"
)

var (
	sim  *testenv.Sim
	iamc *iam.Client
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var err error
	if sim, err = testenv.Start(awssim.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sim.Close()
	iamc = iam.NewFromConfig(sim.Config)
	for _, role := range []string{"role-a", "role-b"} {
		if _, err := iamc.CreateRole(context.Background(), &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[]}`)}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

func roles(t *testing.T, name string) []string {
	t.Helper()
	out, err := iamc.GetInstanceProfile(context.Background(), &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var rs []string
	for _, r := range out.InstanceProfile.Roles {
		rs = append(rs, aws.ToString(r.RoleName))
	}
	return rs
}

func TestManagedProfileFollowsTheRoleAndIsDeleted(t *testing.T) {
	ctx := context.Background()
	p := instanceprofile.New(iamc, "demo", "us-west-2")
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "uid-1"}, Spec: awsv1.EC2NodeClassSpec{Role: "role-a"}}
	name, err := p.Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if name != p.Name(nc) || len(name) > 128 {
		t.Fatalf("profile %q, want %q", name, p.Name(nc))
	}
	if other := instanceprofile.New(iamc, "other", "us-west-2").Name(nc); other == name {
		t.Error("two clusters share a profile name")
	}
	if got := roles(t, name); len(got) != 1 || got[0] != "role-a" {
		t.Fatalf("roles = %v", got)
	}
	// A second resolve reuses the profile.
	if again, err := p.Resolve(ctx, nc); err != nil || again != name {
		t.Fatalf("second resolve: %q, %v", again, err)
	}
	// Changing the role swaps it (a fresh provider: no cached knowledge).
	nc.Spec.Role = "role-b"
	if _, err := instanceprofile.New(iamc, "demo", "us-west-2").Resolve(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if got := roles(t, name); len(got) != 1 || got[0] != "role-b" {
		t.Fatalf("roles after the role change = %v", got)
	}
	if err := p.Delete(ctx, nc); err != nil {
		t.Fatal(err)
	}
	_, err = iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
	var nf *iamtypes.NoSuchEntityException
	if !errors.As(err, &nf) {
		t.Fatalf("after Delete: %v, want NoSuchEntity", err)
	}
	if err := p.Delete(ctx, nc); err != nil {
		t.Errorf("deleting an absent profile: %v", err)
	}
}

func TestGivenProfileMustExist(t *testing.T) {
	p := instanceprofile.New(iamc, "demo", "us-west-2")
	missing := "not-there"
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "given"}, Spec: awsv1.EC2NodeClassSpec{InstanceProfile: &missing}}
	if _, err := p.Resolve(context.Background(), nc); err == nil {
		t.Fatal("a missing spec.instanceProfile resolved")
	}
	if err := p.Delete(context.Background(), nc); err != nil {
		t.Errorf("Delete of an unmanaged profile: %v", err)
	}
}
