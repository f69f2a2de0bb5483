package provider

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/joistdev/terraform-provider-joist/internal/awssim"
	awseventbridge "github.com/joistdev/terraform-provider-joist/internal/awssim/eventbridge"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

const queueAddr = "joist_interruption_queue.test"

func queueConfig(name, extra string) string {
	return awsProviderBlock() + fmt.Sprintf(`
resource "joist_interruption_queue" "test" {
  name = %q
  %s
}
`, name, extra)
}

// checkQueue asserts the live queue's attributes and that an EC2 event
// reaches it through EventBridge.
func checkQueue(sim *awssim.Server, name string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		attrs, ok := sim.SQS.Attributes(name)
		if !ok {
			return fmt.Errorf("queue %s does not exist", name)
		}
		for k, v := range want {
			if attrs[k] != v {
				return fmt.Errorf("queue %s: %s = %q, want %q", name, k, attrs[k], v)
			}
		}
		if !sameJSON(attrs["Policy"], queue.QueuePolicy(sim.SQS.QueueARN(name))) {
			return fmt.Errorf("queue %s policy = %s", name, attrs["Policy"])
		}
		before := attrs["ApproximateNumberOfMessages"]
		if _, err := sim.EventBridge.PutEvent(awseventbridge.Event{
			Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning", Detail: map[string]any{"instance-id": "i-0123456789abcdef0"},
		}); err != nil {
			return err
		}
		after, _ := sim.SQS.Attributes(name)
		if after["ApproximateNumberOfMessages"] == before {
			return fmt.Errorf("a spot interruption warning did not reach queue %s (still %s messages)", name, before)
		}
		return nil
	}
}

func TestAccInterruptionQueueLifecycle(t *testing.T) {
	sim := awsSim(t)
	const name = "acc-queue"
	ctx := context.Background()
	q, eb := sqs.NewFromConfig(sim.AWSConfig()), eventbridge.NewFromConfig(sim.AWSConfig())
	spotRule := queue.Rules[1].RuleName(name)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if _, ok := sim.SQS.Attributes(name); ok {
				return fmt.Errorf("queue %s still exists", name)
			}
			rules, err := eb.ListRules(ctx, &eventbridge.ListRulesInput{NamePrefix: aws.String(name)})
			if err != nil {
				return err
			}
			if len(rules.Rules) != 0 {
				return fmt.Errorf("%d rules of queue %s remain", len(rules.Rules), name)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: queueConfig(name, `tags = { team = "a" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(queueAddr, tfjsonpath.New("arn"), knownvalue.StringExact(sim.SQS.QueueARN(name))),
					statecheck.ExpectKnownValue(queueAddr, tfjsonpath.New("sqs_managed_sse_enabled"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(queueAddr, tfjsonpath.New("rule_arns").AtMapKey("spot-interruption"),
						knownvalue.StringExact("arn:aws:events:us-west-2:123456789012:rule/"+spotRule)),
					statecheck.ExpectKnownValue(queueAddr, tfjsonpath.New("rules").AtMapKey("instance-state-change").AtMapKey("target_arns"),
						knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact(sim.SQS.QueueARN(name))})),
				},
				Check: checkQueue(sim, name, map[string]string{"MessageRetentionPeriod": "300", "SqsManagedSseEnabled": "true"}),
			},
			{
				Config: queueConfig(name, `tags = { team = "b" }
  message_retention_seconds = 600`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(queueAddr, plancheck.ResourceActionUpdate),
				}},
				Check: checkQueue(sim, name, map[string]string{"MessageRetentionPeriod": "600"}),
			},
			{
				// Out-of-band: the policy is opened up and the spot rule deleted.
				PreConfig: func() {
					url := mustQueueURL(t, q, name)
					if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{
						"Policy": `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*"}]}`,
					}}); err != nil {
						t.Fatal(err)
					}
					if _, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(spotRule), Ids: []string{queueTargetID}}); err != nil {
						t.Fatal(err)
					}
					if _, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(spotRule)}); err != nil {
						t.Fatal(err)
					}
				},
				Config: queueConfig(name, `tags = { team = "b" }
  message_retention_seconds = 600`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(queueAddr, plancheck.ResourceActionUpdate),
				}},
				Check: resource.ComposeTestCheckFunc(
					checkQueue(sim, name, map[string]string{"MessageRetentionPeriod": "600"}),
					func(*terraform.State) error {
						_, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(spotRule)})
						return err
					},
				),
			},
			{ResourceName: queueAddr, ImportState: true, ImportStateId: name, ImportStateVerify: true},
			{
				Config: queueConfig(name, `tags = { team = "b" }
  message_retention_seconds = 600
  kms_master_key_id = "alias/joist"`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(queueAddr, plancheck.ResourceActionUpdate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(queueAddr, tfjsonpath.New("sqs_managed_sse_enabled"), knownvalue.Bool(false)),
				},
				Check: checkQueue(sim, name, map[string]string{"KmsMasterKeyId": "alias/joist"}),
			},
		},
	})
}

func mustQueueURL(t *testing.T, q *sqs.Client, name string) string {
	t.Helper()
	out, err := q.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.QueueUrl)
}
