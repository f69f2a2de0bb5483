package provider

// The EventBridge rules of joist_interruption_queue: which rules a queue
// has, and the ownership rule that lets the resource overwrite or delete a
// rule only when it is the queue's.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

// desiredRules are the rules of a queue whose ARN is known, named from
// base (the queue's rule_name_prefix or name).
func desiredRules(base, queueARN string) map[string]queueRule {
	out := map[string]queueRule{}
	for _, rule := range queue.Rules {
		rn := rule.RuleName(base)
		out[rule.Key] = queueRule{
			Name: rn, ARN: rule.RuleARN(base, queueARN), EventPattern: rule.Pattern(), State: "ENABLED", Targets: []string{queueARN},
		}
	}
	return out
}

func rulesValues(rules map[string]queueRule) (types.Map, types.Map) {
	objs, arns := map[string]attr.Value{}, map[string]attr.Value{}
	for k, r := range rules {
		objs[k] = r.value()
		arns[k] = types.StringValue(r.ARN)
	}
	return types.MapValueMust(queueRuleType, objs), types.MapValueMust(types.StringType, arns)
}

// queueOwnerTag marks an EventBridge rule as the named queue's: the rule
// is overwritten or deleted only when it carries it (or, for rules of
// earlier versions without tags, when its only target is the queue).
const queueOwnerTag = "joist.dev/interruption-queue"

// legacyRuleName is the name versions before hashed names gave a rule: the
// queue name cut to fit, which two queues sharing a long prefix shared.
func legacyRuleName(rule queue.Rule, queue string) string {
	if room := 64 - len(rule.Key) - 1; len(queue) > room {
		queue = queue[:room]
	}
	return queue + "-" + rule.Key
}

// notOurRule is ownRule's error for a rule that exists and is another's.
type notOurRule struct{ msg string }

func (e notOurRule) Error() string { return e.msg }

// ownRule reports whether the rule named rn exists and fails (notOurRule)
// when it exists but belongs to something else than the queue: another
// cluster's queue whose name shares ours, or a rule someone made by hand.
func ownRule(ctx context.Context, eb *eventbridge.Client, rn, queue, queueARN string) (exists bool, err error) {
	d, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(rn)})
	if isAWSCode(err, "ResourceNotFoundException") {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("events:DescribeRule %s: %w", rn, err)
	}
	tags, err := eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: d.Arn})
	if err != nil {
		return true, fmt.Errorf("events:ListTagsForResource %s: %w", rn, err)
	}
	owner, tagged := "", false
	for _, t := range tags.Tags {
		if aws.ToString(t.Key) == queueOwnerTag {
			owner, tagged = aws.ToString(t.Value), true
		}
	}
	if tagged {
		if owner == queue {
			return true, nil
		}
		return true, notOurRule{fmt.Sprintf("EventBridge rule %s belongs to the interruption queue %s (tag %s), not to %s: "+
			"it is left alone; give this queue a name that does not collide", rn, owner, queueOwnerTag, queue)}
	}
	targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
	if err != nil {
		return true, fmt.Errorf("events:ListTargetsByRule %s: %w", rn, err)
	}
	if len(targets.Targets) == 1 && aws.ToString(targets.Targets[0].Id) == queueTargetID && aws.ToString(targets.Targets[0].Arn) == queueARN {
		return true, nil
	}
	var to []string
	for _, t := range targets.Targets {
		to = append(to, aws.ToString(t.Arn))
	}
	return true, notOurRule{fmt.Sprintf("EventBridge rule %s exists, has no %s tag and does not target only the queue %s (targets: %s): "+
		"it is not this queue's and is left alone; delete or rename it, or give the queue another name", rn, queueOwnerTag, queueARN, strings.Join(to, ", "))}
}

// deleteOwnRule removes the rule's targets and the rule when it is the
// queue's; a missing rule is done, and another's stays untouched.
func deleteOwnRule(ctx context.Context, eb *eventbridge.Client, rn, queue, queueARN string) error {
	exists, err := ownRule(ctx, eb, rn, queue, queueARN)
	var other notOurRule
	if errors.As(err, &other) {
		tflog.Warn(ctx, "leaving an EventBridge rule that is not this queue's", map[string]any{"rule": rn, "reason": other.msg})
		return nil
	}
	if err != nil || !exists {
		return err
	}
	targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
	if err != nil {
		return fmt.Errorf("events:ListTargetsByRule %s: %w", rn, err)
	}
	var ids []string
	for _, t := range targets.Targets {
		ids = append(ids, aws.ToString(t.Id))
	}
	if len(ids) > 0 {
		if _, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rn), Ids: ids}); err != nil {
			return fmt.Errorf("events:RemoveTargets %s: %w", rn, err)
		}
	}
	if _, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rn)}); err != nil && !isAWSCode(err, "ResourceNotFoundException") {
		return fmt.Errorf("events:DeleteRule %s: %w", rn, err)
	}
	return nil
}

// queueTargetID is the ID of each rule's one target.
const queueTargetID = "joist-interruption-queue"

// ruleNamePrefixMax keeps "<prefix>-<key>" within EventBridge's 64
// characters for the longest key, so a rule's name shows its prefix whole.
const ruleNamePrefixMax = 30

// importedRulePrefix finds the prefix of the queue's rules: the name
// before "-<key>" of a rule tagged as the queue's. Null when they carry
// the queue's own name.
func importedRulePrefix(ctx context.Context, eb *eventbridge.Client, queueName string) (types.String, error) {
	suffix := "-" + queue.Rules[0].Key
	var token *string
	for {
		page, err := eb.ListRules(ctx, &eventbridge.ListRulesInput{NextToken: token})
		if err != nil {
			return types.StringNull(), fmt.Errorf("events:ListRules: %w", err)
		}
		for _, rule := range page.Rules {
			name := aws.ToString(rule.Name)
			if !strings.HasSuffix(name, suffix) {
				continue
			}
			tags, err := eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: rule.Arn})
			if err != nil {
				return types.StringNull(), fmt.Errorf("events:ListTagsForResource %s: %w", name, err)
			}
			for _, t := range tags.Tags {
				if aws.ToString(t.Key) == queueOwnerTag && aws.ToString(t.Value) == queueName {
					if base := strings.TrimSuffix(name, suffix); base != queueName && queue.Rules[0].RuleName(base) == name {
						return types.StringValue(base), nil
					}
					return types.StringNull(), nil
				}
			}
		}
		if page.NextToken == nil {
			return types.StringNull(), nil
		}
		token = page.NextToken
	}
}
