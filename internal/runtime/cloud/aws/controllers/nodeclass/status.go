package nodeclass

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
	awsprovider "github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/capacity"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/instancetype"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/cloud/aws/userdata"
)

// Requeue cadences: resolved values are re-checked every few minutes (the
// providers' caches make that cheap), unresolved ones every minute.
const (
	RequeueResolved   = 5 * time.Minute
	RequeueUnresolved = time.Minute
	// RequeueSubnets is shorter: free addresses shift with every launch.
	RequeueSubnets = time.Minute
)

// Resolve fills nc.Status from AWS and sets every condition including
// Ready. It returns when to look again.
func Resolve(ctx context.Context, p *awsprovider.Provider, nc *awsv1.EC2NodeClass) time.Duration {
	requeue := RequeueResolved
	unresolved := func() { requeue = min(requeue, RequeueUnresolved) }

	if subnets, err := p.Subnets().List(ctx, nc); err != nil {
		setFalse(nc, v1.ConditionTypeSubnetsReady, "SubnetsResolutionFailed", err.Error())
		unresolved()
	} else if len(subnets) == 0 {
		nc.Status.Subnets = nil
		setFalse(nc, v1.ConditionTypeSubnetsReady, "SubnetsNotFound", "no subnet matches spec.subnetSelectorTerms; check the tags or IDs")
		unresolved()
	} else {
		nc.Status.Subnets = nc.Status.Subnets[:0]
		for _, s := range subnets {
			nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone), ZoneID: aws.ToString(s.AvailabilityZoneId)})
		}
		setTrue(nc, v1.ConditionTypeSubnetsReady)
		requeue = min(requeue, RequeueSubnets)
	}

	if groups, err := p.SecurityGroups().List(ctx, nc); err != nil {
		setFalse(nc, v1.ConditionTypeSecurityGroupsReady, "SecurityGroupsResolutionFailed", err.Error())
		unresolved()
	} else if len(groups) == 0 {
		nc.Status.SecurityGroups = nil
		setFalse(nc, v1.ConditionTypeSecurityGroupsReady, "SecurityGroupsNotFound", "no security group matches spec.securityGroupSelectorTerms; check the tags, IDs or names")
		unresolved()
	} else {
		nc.Status.SecurityGroups = nc.Status.SecurityGroups[:0]
		for _, g := range groups {
			nc.Status.SecurityGroups = append(nc.Status.SecurityGroups, awsv1.SecurityGroup{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)})
		}
		setTrue(nc, v1.ConditionTypeSecurityGroupsReady)
	}

	if amis, err := p.AMIs().List(ctx, nc); err != nil {
		setFalse(nc, v1.ConditionTypeAMIsReady, "AMIsResolutionFailed", err.Error())
		unresolved()
	} else if len(amis) == 0 {
		nc.Status.AMIs = nil
		setFalse(nc, v1.ConditionTypeAMIsReady, "AMINotFound", "no image matches spec.amiSelectorTerms; check the alias, IDs, names, owners or tags")
		unresolved()
	} else {
		nc.Status.AMIs = amis
		setTrue(nc, v1.ConditionTypeAMIsReady)
	}

	if profile, err := p.InstanceProfiles().Resolve(ctx, nc); err != nil {
		reason := "InstanceProfileCreationFailed"
		if nc.Spec.InstanceProfile != nil {
			reason = "InstanceProfileNotFound"
		}
		setFalse(nc, v1.ConditionTypeInstanceProfileReady, reason, err.Error())
		unresolved()
	} else {
		nc.Status.InstanceProfile = profile
		setTrue(nc, v1.ConditionTypeInstanceProfileReady)
	}

	reason, msg := validate(p, nc)
	if reason == "" {
		reason, msg = p.ValidateLaunchPermissions(ctx, nc)
	}
	if reason != "" {
		setFalse(nc, v1.ConditionTypeValidationSucceeded, reason, msg)
	} else {
		setTrue(nc, v1.ConditionTypeValidationSucceeded)
	}
	setRoot(nc)
	return requeue
}

// validate checks what the API schema cannot: that the kubelet settings
// parse for the overhead model and that user data can be generated.
func validate(p *awsprovider.Provider, nc *awsv1.EC2NodeClass) (reason, message string) {
	if _, err := capacity.Compute(capacity.Instance{VCPUs: 2, MemoryMiB: 4096, Arch: v1.ArchitectureAmd64, MaxENIs: 3, IPv4PerENI: 10},
		instancetype.KubeletOf(nc.Spec.Kubelet), capacity.Options{Family: instancetype.CapacityFamily(nc.AMIFamily())}); err != nil {
		return "InvalidKubeletConfiguration", err.Error()
	}
	s := p.Settings()
	ud, err := userdata.Generate(nc.AMIFamily(), userdata.Options{
		ClusterName: s.ClusterName, ClusterEndpoint: s.ClusterEndpoint, CABundle: s.ClusterCABundle,
		ClusterCIDR: s.ClusterCIDR, Kubelet: nc.Spec.Kubelet, Custom: nc.Spec.UserData,
	})
	if err != nil {
		return "InvalidUserData", err.Error()
	}
	// EC2 takes at most 16 KiB of user data before base64.
	if len(ud) > 16*1024 {
		return "UserDataSizeLimitExceeded", fmt.Sprintf("the generated user data is %d bytes; EC2 allows 16384: shorten spec.userData", len(ud))
	}
	return "", ""
}

func setTrue(nc *awsv1.EC2NodeClass, t string) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t, ObservedGeneration: nc.Generation})
}

func setFalse(nc *awsv1.EC2NodeClass, t, reason, msg string) {
	meta.SetStatusCondition(&nc.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, Reason: reason, Message: msg, ObservedGeneration: nc.Generation})
}

// setRoot makes Ready the conjunction of the dependent conditions, naming
// the ones that are not True.
func setRoot(nc *awsv1.EC2NodeClass) {
	var bad []string
	for _, t := range v1.EC2NodeClassReadyConditions {
		c := meta.FindStatusCondition(nc.Status.Conditions, t)
		switch {
		case c == nil:
			bad = append(bad, t+"=Unknown")
		case c.Status != metav1.ConditionTrue:
			msg := t + "=" + string(c.Status)
			if c.Message != "" {
				msg += " (" + c.Message + ")"
			}
			bad = append(bad, msg)
		}
	}
	if len(bad) == 0 {
		setTrue(nc, v1.ConditionTypeReady)
		return
	}
	msg := bad[0]
	for _, b := range bad[1:] {
		msg += ", " + b
	}
	setFalse(nc, v1.ConditionTypeReady, "UnhealthyDependents", msg)
}
