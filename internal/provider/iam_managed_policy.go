package provider

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// ownedPolicyPrefix is the ARN prefix of the managed policies this resource
// creates: <role name>-<n> under the role's path.
func ownedPolicyPrefix(m *controllerIAMRoleModel, roleARN string) string {
	account := strings.Split(roleARN, ":")[4]
	partition := strings.Split(roleARN, ":")[1]
	return fmt.Sprintf("arn:%s:iam::%s:policy%s%s-", partition, account, m.Path.ValueString(), m.Name.ValueString())
}

// putManaged creates or updates the managed policies <name>-1..n. On an
// error it returns the policies made so far, for the state to keep.
func (r *ControllerIAMRoleResource) putManaged(ctx context.Context, c *iam.Client, m *controllerIAMRoleModel, roleARN string, docs []string, diags *diag.Diagnostics) ([]string, error) {
	var arns []string
	tags := iamTags(stringMap(ctx, m.Tags, diags))
	prefix := ownedPolicyPrefix(m, roleARN)
	for i, doc := range docs {
		pname := fmt.Sprintf("%s-%d", m.Name.ValueString(), i+1)
		out, err := c.CreatePolicy(ctx, &iam.CreatePolicyInput{
			PolicyName: aws.String(pname), Path: aws.String(m.Path.ValueString()), PolicyDocument: aws.String(doc), Tags: tags,
			Description: aws.String(fmt.Sprintf("Joist controller permissions, part %d of %d", i+1, len(docs))),
		})
		switch {
		case err == nil:
			arns = append(arns, aws.ToString(out.Policy.Arn))
		case isAWSCode(err, "EntityAlreadyExists"):
			parn := fmt.Sprintf("%s%d", prefix, i+1)
			if err := setPolicyDocument(ctx, c, parn, doc); err != nil {
				return arns, err
			}
			arns = append(arns, parn)
		default:
			return arns, fmt.Errorf("iam:CreatePolicy %s: %w", pname, err)
		}
	}
	return arns, nil
}

// setPolicyDocument makes doc the default version of a managed policy,
// deleting the oldest version when IAM's five are used.
func setPolicyDocument(ctx context.Context, c *iam.Client, arn, doc string) error {
	cur, err := defaultPolicyDocument(ctx, c, arn)
	if err != nil {
		return err
	}
	if sameJSON(cur, doc) {
		return nil
	}
	versions, err := c.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return fmt.Errorf("iam:ListPolicyVersions %s: %w", arn, err)
	}
	if len(versions.Versions) >= 5 {
		oldest := versions.Versions[0]
		for _, v := range versions.Versions {
			if !v.IsDefaultVersion && (oldest.IsDefaultVersion || aws.ToTime(v.CreateDate).Before(aws.ToTime(oldest.CreateDate))) {
				oldest = v
			}
		}
		if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: oldest.VersionId}); err != nil {
			return fmt.Errorf("iam:DeletePolicyVersion %s: %w", arn, err)
		}
	}
	if _, err := c.CreatePolicyVersion(ctx, &iam.CreatePolicyVersionInput{PolicyArn: aws.String(arn), PolicyDocument: aws.String(doc), SetAsDefault: true}); err != nil {
		return fmt.Errorf("iam:CreatePolicyVersion %s: %w", arn, err)
	}
	return nil
}

func defaultPolicyDocument(ctx context.Context, c *iam.Client, arn string) (string, error) {
	p, err := c.GetPolicy(ctx, &iam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("iam:GetPolicy %s: %w", arn, err)
	}
	v, err := c.GetPolicyVersion(ctx, &iam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: p.Policy.DefaultVersionId})
	if err != nil {
		return "", fmt.Errorf("iam:GetPolicyVersion %s: %w", arn, err)
	}
	doc, err := url.QueryUnescape(aws.ToString(v.PolicyVersion.Document))
	if err != nil {
		doc = aws.ToString(v.PolicyVersion.Document)
	}
	return doc, nil
}

// byPart sorts managed policies <name>-<n> by n, documents alongside.
type byPart struct{ arns, docs []string }

func (b byPart) Len() int { return len(b.arns) }

func (b byPart) Less(i, j int) bool {
	pi, pj := b.arns[i][strings.LastIndex(b.arns[i], "-")+1:], b.arns[j][strings.LastIndex(b.arns[j], "-")+1:]
	if len(pi) != len(pj) {
		return len(pi) < len(pj)
	}
	return pi < pj
}

func (b byPart) Swap(i, j int) {
	b.arns[i], b.arns[j] = b.arns[j], b.arns[i]
	b.docs[i], b.docs[j] = b.docs[j], b.docs[i]
}

// canonical is want when live means the same, else live.
func canonical(live, want string) string {
	if want != "" && sameJSON(live, want) {
		return want
	}
	return live
}

// deletePolicy deletes a managed policy and its non-default versions.
func deletePolicy(ctx context.Context, c *iam.Client, arn string) error {
	versions, err := c.ListPolicyVersions(ctx, &iam.ListPolicyVersionsInput{PolicyArn: aws.String(arn)})
	if isAWSCode(err, "NoSuchEntity") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("iam:ListPolicyVersions %s: %w", arn, err)
	}
	for _, v := range versions.Versions {
		if !v.IsDefaultVersion {
			if _, err := c.DeletePolicyVersion(ctx, &iam.DeletePolicyVersionInput{PolicyArn: aws.String(arn), VersionId: v.VersionId}); err != nil {
				return fmt.Errorf("iam:DeletePolicyVersion %s: %w", arn, err)
			}
		}
	}
	if _, err := c.DeletePolicy(ctx, &iam.DeletePolicyInput{PolicyArn: aws.String(arn)}); err != nil && !isAWSCode(err, "NoSuchEntity") {
		return fmt.Errorf("iam:DeletePolicy %s: %w", arn, err)
	}
	return nil
}
