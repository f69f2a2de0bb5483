package instanceprofile_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

func TestARoleChangeMakesANewProfileAndLeavesTheOld(t *testing.T) {
	ctx := context.Background()
	p := instanceprofile.New(iamc, "demo", "us-west-2")
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "uid-1"}, Spec: awsv1.EC2NodeClassSpec{Role: "role-a"}}
	a, err := p.Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if a != p.Name(nc) || len(a) > 128 {
		t.Fatalf("profile %q, want %q", a, p.Name(nc))
	}
	if other := instanceprofile.New(iamc, "other", "us-west-2").Name(nc); other == a {
		t.Error("two clusters share a profile name")
	}
	if got := roles(t, a); len(got) != 1 || got[0] != "role-a" {
		t.Fatalf("roles = %v", got)
	}
	// A second resolve reuses the profile.
	if again, err := p.Resolve(ctx, nc); err != nil || again != a {
		t.Fatalf("second resolve: %q, %v", again, err)
	}
	// A role change resolves to a new profile holding the new role; the
	// profile running nodes use keeps its role (a fresh provider: no
	// cached knowledge).
	nc.Spec.Role = "role-b"
	b, err := instanceprofile.New(iamc, "demo", "us-west-2").Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if b == a {
		t.Fatalf("the role change reused profile %s", a)
	}
	if got := roles(t, b); len(got) != 1 || got[0] != "role-b" {
		t.Fatalf("new profile roles = %v", got)
	}
	if got := roles(t, a); len(got) != 1 || got[0] != "role-a" {
		t.Fatalf("the old profile's roles changed to %v", got)
	}
	managed, err := p.Managed(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	if len(managed) != 2 {
		t.Errorf("%d profiles under the node class's path, want 2", len(managed))
	}
	// Deleting one profile leaves the other; DeleteAll removes the rest.
	if err := p.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, err := iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(b)}); err != nil {
		t.Fatalf("profile %s after deleting %s: %v", b, a, err)
	}
	if err := p.DeleteAll(ctx, nc); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{a, b} {
		_, err = iamc.GetInstanceProfile(ctx, &iam.GetInstanceProfileInput{InstanceProfileName: aws.String(name)})
		var nf *iamtypes.NoSuchEntityException
		if !errors.As(err, &nf) {
			t.Fatalf("%s after DeleteAll: %v, want NoSuchEntity", name, err)
		}
	}
	if err := p.Delete(ctx, a); err != nil {
		t.Errorf("deleting an absent profile: %v", err)
	}
}

func TestLongClusterNamesFitAndDiffer(t *testing.T) {
	long := strings.Repeat("c", 100)
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: strings.Repeat("n", 63), UID: "uid-2"}, Spec: awsv1.EC2NodeClassSpec{Role: "role-a"}}
	a := instanceprofile.New(iamc, long+"-a", "us-west-2").Name(nc)
	b := instanceprofile.New(iamc, long+"-b", "us-west-2").Name(nc)
	if len(a) > 128 || len(b) > 128 || a == b {
		t.Errorf("names %q (%d) and %q (%d): want distinct, at most 128 characters", a, len(a), b, len(b))
	}
	if _, err := instanceprofile.New(iamc, long+"-a", "us-west-2").Resolve(context.Background(), nc); err != nil {
		t.Errorf("IAM refused the name: %v", err)
	}
}

// TestProfilesOfOthersAreLeftAlone: a profile with the name the runtime
// would use but without this cluster's tags is neither used, changed nor
// deleted.
func TestProfilesOfOthersAreLeftAlone(t *testing.T) {
	ctx := context.Background()
	p := instanceprofile.New(iamc, "demo", "us-west-2")
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "squatted", UID: "uid-3"}, Spec: awsv1.EC2NodeClassSpec{Role: "role-a"}}
	name := p.Name(nc)
	if _, err := iamc.CreateInstanceProfile(ctx, &iam.CreateInstanceProfileInput{
		InstanceProfileName: aws.String(name),
		Tags:                []iamtypes.Tag{{Key: aws.String("kubernetes.io/cluster/other"), Value: aws.String("owned")}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := iamc.AddRoleToInstanceProfile(ctx, &iam.AddRoleToInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String("role-b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(ctx, nc); err == nil || !strings.Contains(err.Error(), "not cluster demo's") {
		t.Errorf("resolving onto another's profile: %v, want an error saying it is not this cluster's", err)
	}
	if err := p.Delete(ctx, name); !errors.Is(err, instanceprofile.ErrNotOwned) {
		t.Errorf("deleting another's profile: %v, want ErrNotOwned", err)
	}
	if got := roles(t, name); len(got) != 1 || got[0] != "role-b" {
		t.Errorf("another's profile now holds %v", got)
	}
}

func TestGivenProfileMustExist(t *testing.T) {
	p := instanceprofile.New(iamc, "demo", "us-west-2")
	missing := "not-there"
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "given"}, Spec: awsv1.EC2NodeClassSpec{InstanceProfile: &missing}}
	if _, err := p.Resolve(context.Background(), nc); err == nil {
		t.Fatal("a missing spec.instanceProfile resolved")
	}
	if err := p.DeleteAll(context.Background(), nc); err != nil {
		t.Errorf("DeleteAll for a node class naming its profile: %v", err)
	}
}

// A role taken out of a resolved profile stays unseen by Resolve for
// CacheTTL; CheckLaunch reads the profile again and puts the role back,
// then trusts it for LaunchCheckTTL. With the role gone it fails.
func TestCheckLaunchPutsBackARoleTakenOut(t *testing.T) {
	ctx := context.Background()
	p := instanceprofile.New(iamc, "launch", "us-west-2")
	nc := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default", UID: "uid-launch"}, Spec: awsv1.EC2NodeClassSpec{Role: "role-a"}}
	name, err := p.Resolve(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	nc.Status.InstanceProfile = name
	remove := func() {
		if _, err := iamc.RemoveRoleFromInstanceProfile(ctx, &iam.RemoveRoleFromInstanceProfileInput{InstanceProfileName: aws.String(name), RoleName: aws.String("role-a")}); err != nil {
			t.Fatal(err)
		}
	}
	remove()
	if _, err := p.Resolve(ctx, nc); err != nil || len(roles(t, name)) != 0 {
		t.Fatalf("Resolve within CacheTTL read IAM (err %v, roles %v): the test no longer shows the cache", err, roles(t, name))
	}
	if err := p.CheckLaunch(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if got := roles(t, name); len(got) != 1 || got[0] != "role-a" {
		t.Fatalf("roles after CheckLaunch = %v, want [role-a]", got)
	}
	before := sim.Requests().Count("iam", "GetInstanceProfile")
	if err := p.CheckLaunch(ctx, nc); err != nil {
		t.Fatal(err)
	}
	if n := sim.Requests().Count("iam", "GetInstanceProfile") - before; n != 0 {
		t.Errorf("a second launch within LaunchCheckTTL read the profile %d times", n)
	}
	// A role that no longer exists cannot be put back: no launch.
	nc.Spec.Role = "role-gone"
	nc.Status.InstanceProfile = p.Name(nc)
	if err := p.CheckLaunch(ctx, nc); err == nil {
		t.Error("CheckLaunch allowed a launch into a profile whose role does not exist")
	}
}
