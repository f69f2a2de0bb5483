package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	awseventbridge "github.com/joistdev/terraform-provider-joist/internal/awssim/eventbridge"
	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

// TestAccInterruptionQueueModuleInputs: the EKS module's queue inputs (KMS
// data key reuse, queue policy statements, a rule name prefix) reach SQS
// and EventBridge, change in place (the rules are renamed), and import.
func TestAccInterruptionQueueModuleInputs(t *testing.T) {
	sim := awsSim(t)
	eb := eventbridge.NewFromConfig(sim.AWSConfig())
	ctx := context.Background()
	const name = "acc-mod-queue"
	config := func(reuse int, prefix, action string) string {
		return queueConfig(name, fmt.Sprintf(`kms_master_key_id = "alias/acc-queue"
  kms_data_key_reuse_period_seconds = %d
  rule_name_prefix = %q
  policy_statements = [{
    sid        = "OpsRead"
    actions    = [%q]
    principals = [{ type = "AWS", identifiers = ["arn:aws:iam::123456789012:role/ops"] }]
    resources  = ["arn:aws:sqs:us-west-2:123456789012:%s"]
  }]`, reuse, prefix, action, name))
	}
	check := func(reuse, prefix, oldPrefix, action string) resource.TestCheckFunc {
		return func(*terraform.State) error {
			attrs, ok := sim.SQS.Attributes(name)
			if !ok {
				return fmt.Errorf("queue %s does not exist", name)
			}
			if attrs["KmsDataKeyReusePeriodSeconds"] != reuse || attrs["KmsMasterKeyId"] != "alias/acc-queue" {
				return fmt.Errorf("queue KMS attributes %q %q", attrs["KmsMasterKeyId"], attrs["KmsDataKeyReusePeriodSeconds"])
			}
			st := documentStatements(attrs["Policy"])
			if len(st) != 3 || st[2]["Sid"] != "OpsRead" || !strings.Contains(attrs["Policy"], action) {
				return fmt.Errorf("queue policy %s lacks the OpsRead statement with %s after its own two", attrs["Policy"], action)
			}
			for _, rule := range queue.Rules {
				if _, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(rule.RuleName(prefix))}); err != nil {
					return fmt.Errorf("rule %s: %v", rule.RuleName(prefix), err)
				}
				for _, gone := range []string{rule.RuleName(oldPrefix), rule.RuleName(name)} {
					if gone == rule.RuleName(prefix) {
						continue
					}
					if _, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(gone)}); err == nil {
						return fmt.Errorf("rule %s is still there", gone)
					}
				}
			}
			before := attrs["ApproximateNumberOfMessages"]
			if _, err := sim.EventBridge.PutEvent(awseventbridge.Event{
				Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning", Detail: map[string]any{"instance-id": "i-0123456789abcdef0"},
			}); err != nil {
				return err
			}
			if after, _ := sim.SQS.Attributes(name); after["ApproximateNumberOfMessages"] == before {
				return fmt.Errorf("a spot interruption warning did not reach the queue through the renamed rules")
			}
			return nil
		}
	}
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: testAccProtoV6ProviderFactories,
		Steps: []resource.TestStep{
			{Config: config(600, "AccKarpenter", "sqs:GetQueueAttributes"), Check: check("600", "AccKarpenter", "AccKarpenter", "sqs:GetQueueAttributes")},
			{
				Config: config(900, "AccJoist", "sqs:ReceiveMessage"),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(queueAddr, plancheck.ResourceActionUpdate),
				}},
				Check: check("900", "AccJoist", "AccKarpenter", "sqs:ReceiveMessage"),
			},
			{ResourceName: queueAddr, ImportState: true, ImportStateId: name, ImportStateVerify: true},
		},
	})
}
