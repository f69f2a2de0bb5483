package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy"
)

const queueKeyARN = "arn:aws:kms:us-west-2:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

func queueKeyConfig(key string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_node_iam_role" "node" {
  name = "acc-kms-node"
}

resource "joist_interruption_queue" "q" {
  name              = "acc-kms"
  kms_master_key_id = %[1]q
}

resource "joist_controller_iam_role" "test" {
  name                    = "acc-kms-controller"
  node_role_arn           = joist_node_iam_role.node.arn
  interruption_queue_name = joist_interruption_queue.q.name
  %[2]s
}
`, queueKeyARN, key)
}

// receiveAsRole receives from the queue with a session of the role, as the
// controller does, after a message was sent to it.
func receiveAsRole(sim *awssim.Server, role, queue string) error {
	ctx := context.Background()
	admin := sim.AWSConfig()
	q := sqs.NewFromConfig(admin)
	url, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		return err
	}
	if _, err := q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String("{}")}); err != nil {
		return err
	}
	r, err := iam.NewFromConfig(admin).GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(role)})
	if err != nil {
		return err
	}
	session, err := sts.NewFromConfig(admin).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: r.Role.Arn, RoleSessionName: aws.String("controller")})
	if err != nil {
		return err
	}
	cfg := admin.Copy()
	c := session.Credentials
	cfg.Credentials = credentials.NewStaticCredentialsProvider(aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))
	got, err := sqs.NewFromConfig(cfg).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl})
	if err == nil && len(got.Messages) == 0 {
		return fmt.Errorf("no message received")
	}
	return err
}

// With the queue's key the controller role may decrypt its messages, and
// only with that key, only through SQS: the role's statement is kms:Decrypt
// on the key ARN, and a session of the role reads an SSE-KMS queue that it
// could not read without it. A key given by alias is refused at plan,
// naming the field.
func TestAccControllerRoleDecryptsTheQueueKey(t *testing.T) {
	sim := awsSim(t)
	iamc := iam.NewFromConfig(sim.AWSConfig())
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config:      queueKeyConfig(`interruption_queue_kms_key_arn = "alias/joist"`),
				ExpectError: regexp.MustCompile(`(?s)interruption_queue_kms_key_arn.*is an alias: give the key's ARN`),
			},
			{
				Config: queueKeyConfig(""),
				Check: func(*terraform.State) error {
					if err := receiveAsRole(sim, "acc-kms-controller", "acc-kms"); err == nil || !regexp.MustCompile(`KMS.AccessDeniedException`).MatchString(err.Error()) {
						return fmt.Errorf("without the key, a receive as the controller role: %v, want KMS.AccessDeniedException", err)
					}
					return nil
				},
			},
			{
				Config: queueKeyConfig(`interruption_queue_kms_key_arn = joist_interruption_queue.q.kms_master_key_id`),
				Check: func(*terraform.State) error {
					live, err := readRole(context.Background(), iamc, "acc-kms-controller")
					if err != nil || live == nil {
						return fmt.Errorf("role: %v", err)
					}
					var doc policy.Document
					if err := json.Unmarshal([]byte(live.Inline[inlinePolicyName]), &doc); err != nil {
						return err
					}
					var kms []policy.Statement
					for _, st := range doc.Statement {
						if slices.ContainsFunc(st.Action, func(a string) bool { return len(a) > 4 && a[:4] == "kms:" }) {
							kms = append(kms, st)
						}
					}
					if len(kms) != 1 || !slices.Equal(kms[0].Action, []string{"kms:Decrypt"}) || !slices.Equal(kms[0].Resource, []string{queueKeyARN}) ||
						!slices.Equal(kms[0].Condition["StringEquals"]["kms:ViaService"], []string{"sqs.us-west-2.amazonaws.com"}) {
						return fmt.Errorf("KMS statements %+v, want one: kms:Decrypt on %s via sqs.us-west-2.amazonaws.com", kms, queueKeyARN)
					}
					return receiveAsRole(sim, "acc-kms-controller", "acc-kms")
				},
			},
			// An imported role reads its key back from its policy.
			{ResourceName: "joist_controller_iam_role.test", ImportState: true, ImportStateId: "acc-kms-controller", ImportStateVerify: true},
		},
	})
}
