package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
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
		if !sameJSON(attrs["Policy"], queue.QueuePolicy(sim.SQS.QueueARN(name), name)) {
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
	stateRule := queue.Rules[3].RuleName(name)
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
			{
				// The state-change rule as an earlier version (and
				// Karpenter) made it, routing every state: put back to
				// the states acted on.
				PreConfig: func() {
					if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(stateRule),
						EventPattern: aws.String(`{"source":["aws.ec2"],"detail-type":["EC2 Instance State-change Notification"]}`)}); err != nil {
						t.Fatal(err)
					}
				},
				Config: queueConfig(name, `tags = { team = "b" }
  message_retention_seconds = 600`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(queueAddr, plancheck.ResourceActionUpdate),
				}},
				Check: func(*terraform.State) error {
					got, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(stateRule)})
					if err != nil {
						return err
					}
					if p := aws.ToString(got.EventPattern); !strings.Contains(p, `"state":["stopping","stopped","shutting-down","terminated"]`) {
						return fmt.Errorf("rule %s pattern %s, want the four states acted on", stateRule, p)
					}
					return nil
				},
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

// queueRulesIntact checks that each of the queue's five rules exists and
// targets only the queue.
func queueRulesIntact(eb *eventbridge.Client, sim *awssim.Server, name string) error {
	ctx := context.Background()
	for _, rule := range queue.Rules {
		rn := rule.RuleName(name)
		if _, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(rn)}); err != nil {
			return fmt.Errorf("queue %s: rule %s: %v", name, rn, err)
		}
		targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
		if err != nil {
			return err
		}
		if len(targets.Targets) != 1 || aws.ToString(targets.Targets[0].Arn) != sim.SQS.QueueARN(name) {
			return fmt.Errorf("queue %s: rule %s targets %+v, want only %s", name, rn, targets.Targets, sim.SQS.QueueARN(name))
		}
	}
	return nil
}

// Two clusters' queues whose names share a 40-character prefix (and are too
// long for EventBridge's 64-character rule names): each gets its own five
// rules, and destroying one leaves the other's rules and targets as they
// were.
func TestAccInterruptionQueuesSharingAPrefix(t *testing.T) {
	sim := awsSim(t)
	eb := eventbridge.NewFromConfig(sim.AWSConfig())
	const prefix = "platform-prod-eu-west-1-payments-cluster-" // 41 characters
	blue, green := prefix+"blue-interruption-events", prefix+"green-interruption-events"
	two := awsProviderBlock() + fmt.Sprintf(`
resource "joist_interruption_queue" "blue" { name = %q }
resource "joist_interruption_queue" "green" { name = %q }
`, blue, green)
	one := awsProviderBlock() + fmt.Sprintf(`
resource "joist_interruption_queue" "blue" { name = %q }
`, blue)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{
				Config: two,
				Check: func(*terraform.State) error {
					for _, q := range []string{blue, green} {
						if err := queueRulesIntact(eb, sim, q); err != nil {
							return err
						}
					}
					return nil
				},
			},
			{
				Config: one,
				Check: func(*terraform.State) error {
					if _, ok := sim.SQS.Attributes(green); ok {
						return fmt.Errorf("queue %s still exists", green)
					}
					return queueRulesIntact(eb, sim, blue)
				},
			},
		},
	})
}

// A rule that already has this queue's rule name but belongs to another
// queue is never overwritten: the create fails and says why, and the rule
// keeps its target.
func TestAccInterruptionQueueLeavesAnothersRule(t *testing.T) {
	sim := awsSim(t)
	ctx := context.Background()
	eb := eventbridge.NewFromConfig(sim.AWSConfig())
	const name = "acc-queue-foreign-rule"
	rn := queue.Rules[2].RuleName(name)
	const foreign = "arn:aws:sqs:us-west-2:123456789012:someone-elses"
	if _, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(rn), EventPattern: aws.String(queue.Rules[2].Pattern())}); err != nil {
		t.Fatal(err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rn), Targets: []ebtypes.Target{{Id: aws.String("theirs"), Arn: aws.String(foreign)}}}); err != nil {
		t.Fatal(err)
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      queueConfig(name, ""),
			ExpectError: regexp.MustCompile(`EventBridge\s+rule\s+` + rn + `\s+exists,\s+has\s+no\s+joist.dev/interruption-queue\s+tag\s+and\s+does\s+not\s+target\s+only`),
		}},
		CheckDestroy: func(*terraform.State) error {
			targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
			if err != nil {
				return fmt.Errorf("the foreign rule %s is gone: %v", rn, err)
			}
			if len(targets.Targets) != 1 || aws.ToString(targets.Targets[0].Arn) != foreign {
				return fmt.Errorf("the foreign rule %s targets %+v, want only %s", rn, targets.Targets, foreign)
			}
			return nil
		},
	})
}
