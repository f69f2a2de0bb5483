package testenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/apis/awsv1"
	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// NodeRole is the node IAM role tests create in the simulated IAM.
const NodeRole = "KarpenterNodeRole-joist"

// NodeClass is an EC2NodeClass selecting the simulated VPC's discoverable
// subnets and security groups of cluster, with an alias and the node role.
func NodeClass(name, cluster, alias string) *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: awsv1.EC2NodeClassSpec{
			SubnetSelectorTerms:        []awsv1.SubnetSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": cluster}}},
			SecurityGroupSelectorTerms: []awsv1.SecurityGroupSelectorTerm{{Tags: map[string]string{"karpenter.sh/discovery": cluster}}},
			AMISelectorTerms:           []awsv1.AMISelectorTerm{{Alias: alias}},
			Role:                       NodeRole,
			Tags:                       map[string]string{"team": "platform"},
		},
	}
}

// NodeClaim is a claim of a pool for a node class with requirements.
func NodeClaim(name, pool, nodeClass string, reqs ...v1.NodeSelectorRequirementWithMinValues) *v1.NodeClaim {
	return &v1.NodeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.NodePoolLabelKey: pool}},
		Spec: v1.NodeClaimSpec{
			Requirements: reqs,
			NodeClassRef: &v1.NodeClassReference{Group: v1.AWSGroup, Kind: awsv1.EC2NodeClassKind, Name: nodeClass},
		},
	}
}

// In is a requirement key In values.
func In(key string, values ...string) v1.NodeSelectorRequirementWithMinValues {
	return v1.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
}

// CreateNodeRole creates NodeRole in the simulated IAM, trusted by EC2.
func (s *Sim) CreateNodeRole(ctx context.Context) error {
	_, err := iam.NewFromConfig(s.Config).CreateRole(ctx, &iam.CreateRoleInput{
		RoleName:                 aws.String(NodeRole),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	return err
}
