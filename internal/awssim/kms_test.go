package awssim_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
)

// roleSession creates a role with an inline policy and returns a
// configuration signed with a session of it, as a pod's credentials are.
func roleSession(t *testing.T, s *awssim.Server, role, policy string) aws.Config {
	t.Helper()
	admin := s.AWSConfig()
	out, err := iam.NewFromConfig(admin).CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	putRolePolicy(t, s, role, policy)
	creds, err := sts.NewFromConfig(admin).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: out.Role.Arn, RoleSessionName: aws.String("test")})
	if err != nil {
		t.Fatal(err)
	}
	cfg := admin.Copy()
	c := creds.Credentials
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))
	return cfg
}

func putRolePolicy(t *testing.T, s *awssim.Server, role, policy string) {
	t.Helper()
	if _, err := iam.NewFromConfig(s.AWSConfig()).PutRolePolicy(ctx, &iam.PutRolePolicyInput{
		RoleName: aws.String(role), PolicyName: aws.String("permissions"), PolicyDocument: aws.String(policy)}); err != nil {
		t.Fatal(err)
	}
}

// An SSE-KMS queue serves a role's session only when its policy allows the
// key: SendMessage needs kms:GenerateDataKey, a ReceiveMessage that returns
// messages kms:Decrypt; without them SQS answers KMS.AccessDeniedException.
// An empty poll needs no key, and the AWS managed key no grant.
func TestKMSQueueHoldsCallersToTheirKeyGrant(t *testing.T) {
	s := start(t, awssim.Options{})
	o := s.Options()
	key := "arn:aws:kms:" + o.Region + ":" + o.AccountID + ":key/1234abcd-12ab-34cd-56ef-1234567890ab"
	const sqsOnly = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"}]}`
	role := roleSession(t, s, "consumer", sqsOnly)
	admin := sqs.NewFromConfig(s.AWSConfig())
	consumer := sqs.NewFromConfig(role)

	url := func(name, keyID string) *string {
		out, err := admin.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{"KmsMasterKeyId": keyID}})
		if err != nil {
			t.Fatal(err)
		}
		return out.QueueUrl
	}
	encrypted, managed := url("encrypted", key), url("managed", "alias/aws/sqs")

	if _, err := consumer.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: encrypted}); err != nil {
		t.Fatalf("an empty poll of the encrypted queue failed: %v", err)
	}
	if _, err := consumer.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: encrypted, MessageBody: aws.String("x")}); apiCode(t, err) != "KMS.AccessDeniedException" {
		t.Fatalf("SendMessage without kms:GenerateDataKey: %v, want KMS.AccessDeniedException", err)
	}
	// The account root (the static credentials) may use the key.
	if _, err := admin.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: encrypted, MessageBody: aws.String("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := consumer.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: encrypted}); apiCode(t, err) != "KMS.AccessDeniedException" {
		t.Fatalf("ReceiveMessage without kms:Decrypt: %v, want KMS.AccessDeniedException", err)
	}
	if _, err := consumer.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: managed, MessageBody: aws.String("x")}); err != nil {
		t.Fatalf("the AWS managed key needs no grant: %v", err)
	}

	// A grant on another key, or through another service, does not do.
	putRolePolicy(t, s, "consumer", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"},`+
		`{"Effect":"Allow","Action":"kms:Decrypt","Resource":"`+key+`","Condition":{"StringEquals":{"kms:ViaService":"ec2.`+o.Region+`.amazonaws.com"}}},`+
		`{"Effect":"Allow","Action":"kms:Decrypt","Resource":"`+key+`0"}]}`)
	if _, err := consumer.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: encrypted}); apiCode(t, err) != "KMS.AccessDeniedException" {
		t.Fatalf("ReceiveMessage with grants on another key or service: %v, want KMS.AccessDeniedException", err)
	}

	putRolePolicy(t, s, "consumer", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:*","Resource":"*"},`+
		`{"Effect":"Allow","Action":"kms:Decrypt","Resource":"`+key+`","Condition":{"StringEquals":{"kms:ViaService":"sqs.`+o.Region+`.amazonaws.com"}}}]}`)
	got, err := consumer.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: encrypted})
	if err != nil || len(got.Messages) != 1 {
		t.Fatalf("ReceiveMessage with kms:Decrypt on the key = %v, %v; want the message", got, err)
	}
	if _, err := consumer.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: encrypted, MessageBody: aws.String("x")}); apiCode(t, err) != "KMS.AccessDeniedException" {
		t.Fatalf("SendMessage with kms:Decrypt only: %v, want KMS.AccessDeniedException", err)
	}
}
