package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/joistdev/terraform-provider-joist/internal/runtime/policy/queue"
)

var (
	_ resource.ResourceWithConfigure   = (*InterruptionQueueResource)(nil)
	_ resource.ResourceWithModifyPlan  = (*InterruptionQueueResource)(nil)
	_ resource.ResourceWithImportState = (*InterruptionQueueResource)(nil)
)

// InterruptionQueueResource is joist_interruption_queue: the SQS queue the
// controller reads interruption events from, and the EventBridge rules
// that fill it.
type InterruptionQueueResource struct{ awsBase }

// NewInterruptionQueueResource returns the joist_interruption_queue resource.
func NewInterruptionQueueResource() resource.Resource { return &InterruptionQueueResource{} }

type interruptionQueueModel struct {
	ID                      types.String `tfsdk:"id"`
	Name                    types.String `tfsdk:"name"`
	KMSMasterKeyID          types.String `tfsdk:"kms_master_key_id"`
	MessageRetentionSeconds types.Int64  `tfsdk:"message_retention_seconds"`
	Tags                    types.Map    `tfsdk:"tags"`
	URL                     types.String `tfsdk:"url"`
	ARN                     types.String `tfsdk:"arn"`
	SQSManagedSSEEnabled    types.Bool   `tfsdk:"sqs_managed_sse_enabled"`
	Policy                  types.String `tfsdk:"policy"`
	Rules                   types.Map    `tfsdk:"rules"`
	RuleARNs                types.Map    `tfsdk:"rule_arns"`
	KMSDataKeyReusePeriod   types.Int64  `tfsdk:"kms_data_key_reuse_period_seconds"`
	PolicyStatements        types.List   `tfsdk:"policy_statements"`
	RuleNamePrefix          types.String `tfsdk:"rule_name_prefix"`
}

// ruleBase is what rule names begin with: rule_name_prefix, else the
// queue's name.
func (m *interruptionQueueModel) ruleBase() string {
	if p := m.RuleNamePrefix.ValueString(); p != "" {
		return p
	}
	return m.Name.ValueString()
}

// queueRule is one EventBridge rule as read back.
type queueRule struct {
	Name         string
	ARN          string
	EventPattern string
	State        string
	Targets      []string
}

var queueRuleType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"name": types.StringType, "arn": types.StringType, "event_pattern": types.StringType,
	"state": types.StringType, "target_arns": types.ListType{ElemType: types.StringType},
}}

func (r queueRule) value() attr.Value {
	return types.ObjectValueMust(queueRuleType.AttrTypes, map[string]attr.Value{
		"name": types.StringValue(r.Name), "arn": types.StringValue(r.ARN), "event_pattern": types.StringValue(r.EventPattern),
		"state": types.StringValue(r.State), "target_arns": stringList(r.Targets),
	})
}

func (r *InterruptionQueueResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_interruption_queue"
}

func (r *InterruptionQueueResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	var keys []string
	for _, rule := range queue.Rules {
		keys = append(keys, "`"+rule.Key+"`")
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The SQS queue the Joist controller reads interruption events from, and the five " +
			"EventBridge rules that send it AWS Health scheduled changes, spot interruption warnings, rebalance " +
			"recommendations, instance state changes (to stopping, stopped, shutting-down or terminated) and capacity " +
			"reservation interruption warnings. Messages " +
			"are kept five minutes; the queue policy lets only the queue's own five rules send (EventBridge, with an `aws:SourceArn` condition naming them) and refuses requests " +
			"not made over TLS. Pass `name` to `joist_controller`'s `interruption_queue`. Changes made outside " +
			"Terraform to the queue's policy, encryption, retention, tags, or to the rules and their targets, " +
			"show in the next plan and are put back on apply. Import with the queue name.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				Computed: true, MarkdownDescription: "The queue name.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"name": schema.StringAttribute{
				Required: true, MarkdownDescription: "Queue name; usually the cluster name. Changing it replaces the queue and rules. `queue_name` in the EKS module's `karpenter` submodule.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:    []validator.String{queueNameValidator{}},
			},
			"kms_master_key_id": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "KMS key (ID, ARN or alias) to encrypt messages with. Without it the queue uses " +
					"SQS-managed encryption (SSE-SQS). The key policy must let `events.amazonaws.com` use it, and the controller needs `kms:Decrypt` on it: " +
					"give the key's ARN to `joist_controller_iam_role`'s `interruption_queue_kms_key_arn`. `queue_kms_master_key_id` in the EKS module.",
			},
			"kms_data_key_reuse_period_seconds": schema.Int64Attribute{
				Optional: true, Computed: true, Validators: []validator.Int64{int64validator.Between(60, 86400)},
				MarkdownDescription: "With `kms_master_key_id`: how long SQS reuses a data key before asking KMS again, 60 to 86400 seconds. " +
					"Defaults to 300, as SQS. `queue_kms_data_key_reuse_period_seconds` in the EKS module.",
			},
			"policy_statements": statementsAttribute("Statements added to the queue policy, after the two it always has (the queue's rules may send through EventBridge; no request without TLS). " +
				"`queue_policy_statements` in the EKS module (there a map by statement ID)."),
			"rule_name_prefix": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "What the EventBridge rules' names begin with: `<rule_name_prefix>-<key>`. Defaults to the queue's name. " +
					"Changing it renames the rules (the old ones are deleted). `rule_name_prefix` in the EKS module.",
				Validators: []validator.String{stringvalidator.LengthBetween(1, ruleNamePrefixMax), stringvalidator.RegexMatches(mustRegexp(`^[\.\-_A-Za-z0-9]+$`), "may hold letters, digits, dots, hyphens and underscores")},
			},
			"message_retention_seconds": schema.Int64Attribute{
				Optional: true, Computed: true, Default: int64default.StaticInt64(queue.MessageRetentionSeconds),
				MarkdownDescription: "How long an event waits to be read, 60 to 1209600 seconds. Defaults to 300, as the EKS module: older events are about instances already gone.",
				Validators:          []validator.Int64{int64validator.Between(60, 1209600)},
			},
			"tags": schema.MapAttribute{Optional: true, ElementType: types.StringType, MarkdownDescription: "Tags of the queue and the rules. `tags` in the EKS module."},
			"url":  schema.StringAttribute{Computed: true, MarkdownDescription: "Queue URL.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"arn":  schema.StringAttribute{Computed: true, MarkdownDescription: "Queue ARN.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"sqs_managed_sse_enabled": schema.BoolAttribute{
				Computed: true, MarkdownDescription: "Whether SQS-managed encryption is on (true unless `kms_master_key_id` is set; the queue is always encrypted). `queue_managed_sse_enabled` in the EKS module.",
			},
			"policy": schema.StringAttribute{Computed: true, MarkdownDescription: "The queue policy (JSON)."},
			"rules": schema.MapAttribute{
				Computed: true, ElementType: queueRuleType,
				MarkdownDescription: "The EventBridge rules by key (" + strings.Join(keys, ", ") + "): name, ARN, event pattern, state and target ARNs.",
			},
			"rule_arns": schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "ARNs of the rules by key."},
		},
	}
}

// queueNameValidator enforces SQS's queue-name rules at plan time.
type queueNameValidator struct{}

func (queueNameValidator) Description(context.Context) string {
	return "1-80 letters, digits, hyphens and underscores"
}
func (v queueNameValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}
func (queueNameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	s := req.ConfigValue.ValueString()
	ok := len(s) >= 1 && len(s) <= 80
	for _, c := range s {
		if !(c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			ok = false
		}
	}
	if !ok {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid queue name",
			fmt.Sprintf("%q: a queue name is 1 to 80 letters, digits, hyphens and underscores (FIFO queues are not supported)", s))
	}
}

// ModifyPlan plans the derived attributes (policy, encryption, rules) from
// the configuration, so an out-of-band change to them shows as a diff.
func (r *InterruptionQueueResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return
	}
	var plan interruptionQueueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !plan.KMSMasterKeyID.IsUnknown() {
		plan.SQSManagedSSEEnabled = types.BoolValue(plan.KMSMasterKeyID.IsNull())
		var configured types.Int64
		resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("kms_data_key_reuse_period_seconds"), &configured)...)
		switch {
		case plan.KMSMasterKeyID.IsNull() && !configured.IsNull():
			resp.Diagnostics.AddAttributeError(path.Root("kms_data_key_reuse_period_seconds"), "Data key reuse without a KMS key",
				"kms_data_key_reuse_period_seconds applies to KMS encryption only: set kms_master_key_id, or remove it (SQS-managed encryption has no data keys to reuse)")
			return
		case plan.KMSMasterKeyID.IsNull():
			plan.KMSDataKeyReusePeriod = types.Int64Null()
		case configured.IsNull():
			plan.KMSDataKeyReusePeriod = types.Int64Value(defaultDataKeyReuseSeconds)
		}
	}
	extra, ok := renderStatements(ctx, plan.PolicyStatements, "policy_statements", resourceStatements, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	if !req.State.Raw.IsNull() && !plan.ARN.IsUnknown() && !plan.Name.IsUnknown() && !plan.RuleNamePrefix.IsUnknown() {
		plan.Policy = types.StringUnknown()
		if ok {
			plan.Policy = types.StringValue(queuePolicy(plan.ARN.ValueString(), plan.ruleBase(), extra))
		}
		plan.Rules, plan.RuleARNs = rulesValues(desiredRules(plan.ruleBase(), plan.ARN.ValueString()))
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &plan)...)
}

func (r *InterruptionQueueResource) clients2(ctx context.Context, diags *diag.Diagnostics) (*sqs.Client, *eventbridge.Client, bool) {
	cfg, ok := r.awsConfig(ctx, diags)
	if !ok {
		return nil, nil, false
	}
	return sqs.NewFromConfig(cfg), eventbridge.NewFromConfig(cfg), true
}

func (r *InterruptionQueueResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan interruptionQueueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	q, eb, ok := r.clients2(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	name := plan.Name.ValueString()
	// SQS answers CreateQueue for an existing name with that queue: a queue
	// made by someone else (another cluster's) would be taken over silently.
	if existing, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}); err == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Interruption queue already exists",
			fmt.Sprintf("an SQS queue named %s already exists in this account and region (%s). If it is this configuration's, "+
				"import it (terraform import <address> %s); otherwise choose another name: each cluster needs its own queue.",
				name, aws.ToString(existing.QueueUrl), name))
		return
	} else if !isAWSCode(err, "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist") {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the interruption queue", fmt.Sprintf("sqs:GetQueueUrl %s: %v", name, err))
		return
	}
	tags := stringMap(ctx, plan.Tags, &resp.Diagnostics)
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: tags})
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "Creating the interruption queue", fmt.Sprintf("sqs:CreateQueue %s: %v", name, err))
		return
	}
	url := aws.ToString(out.QueueUrl)
	plan.URL, plan.ID = types.StringValue(url), types.StringValue(name)
	// Save the queue at once, so a failure below leaves it in state (tainted)
	// and the next apply replaces it instead of leaking it.
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		resp.Diagnostics.AddError("Reading the interruption queue", fmt.Sprintf("sqs:GetQueueAttributes %s: %v", name, err))
		return
	}
	plan.ARN = types.StringValue(attrs.Attributes["QueueArn"])
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := r.apply(ctx, q, eb, &plan, nil, tags); err != nil {
		resp.Diagnostics.AddError("Configuring the interruption queue", err.Error())
		return
	}
	r.read(ctx, q, eb, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// apply brings the queue's attributes and tags, and the rules, to the plan.
func (r *InterruptionQueueResource) apply(ctx context.Context, q *sqs.Client, eb *eventbridge.Client, plan *interruptionQueueModel, oldTags, tags map[string]string) error {
	name, url, arn := plan.Name.ValueString(), plan.URL.ValueString(), plan.ARN.ValueString()
	var diags diag.Diagnostics
	extra, _ := renderStatements(ctx, plan.PolicyStatements, "policy_statements", resourceStatements, &diags)
	if diags.HasError() {
		return fmt.Errorf("policy_statements: %v", diags)
	}
	attrs := map[string]string{
		"MessageRetentionPeriod": strconv.FormatInt(plan.MessageRetentionSeconds.ValueInt64(), 10),
		"Policy":                 queuePolicy(arn, plan.ruleBase(), extra),
	}
	if k := plan.KMSMasterKeyID.ValueString(); k != "" {
		attrs["SqsManagedSseEnabled"], attrs["KmsMasterKeyId"] = "false", k
		reuse := int64(defaultDataKeyReuseSeconds)
		if !plan.KMSDataKeyReusePeriod.IsNull() && !plan.KMSDataKeyReusePeriod.IsUnknown() {
			reuse = plan.KMSDataKeyReusePeriod.ValueInt64()
		}
		attrs["KmsDataKeyReusePeriodSeconds"] = strconv.FormatInt(reuse, 10)
	} else {
		attrs["KmsMasterKeyId"], attrs["SqsManagedSseEnabled"] = "", "true"
	}
	if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: attrs}); err != nil {
		return fmt.Errorf("sqs:SetQueueAttributes %s: %w", name, err)
	}
	var remove []string
	for k := range oldTags {
		if _, keep := tags[k]; !keep {
			remove = append(remove, k)
		}
	}
	if len(remove) > 0 {
		if _, err := q.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: remove}); err != nil {
			return fmt.Errorf("sqs:UntagQueue %s: %w", name, err)
		}
	}
	if len(tags) > 0 {
		if _, err := q.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: tags}); err != nil {
			return fmt.Errorf("sqs:TagQueue %s: %w", name, err)
		}
	}
	ebTags := []ebtypes.Tag{{Key: aws.String(queueOwnerTag), Value: aws.String(name)}}
	for k, v := range tags {
		if k != queueOwnerTag {
			ebTags = append(ebTags, ebtypes.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
	}
	for _, rule := range queue.Rules {
		rn := rule.RuleName(plan.ruleBase())
		if _, err := ownRule(ctx, eb, rn, name, arn); err != nil {
			return err // another's rule is never overwritten
		}
		put, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{
			Name: aws.String(rn), EventPattern: aws.String(rule.Pattern()), State: ebtypes.RuleStateEnabled,
			Description: aws.String(rule.Description + " for the Joist interruption queue " + name), Tags: ebTags,
		})
		if err != nil {
			return fmt.Errorf("events:PutRule %s: %w", rn, err)
		}
		// PutRule tags only a rule it creates: an existing one (an earlier
		// version's, or one whose tags were edited) gets them here.
		if _, err := eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: put.RuleArn, Tags: ebTags}); err != nil {
			return fmt.Errorf("events:TagResource %s: %w", rn, err)
		}
		if len(remove) > 0 {
			if _, err := eb.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: put.RuleArn, TagKeys: remove}); err != nil {
				return fmt.Errorf("events:UntagResource %s: %w", rn, err)
			}
		}
		targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
		if err != nil {
			return fmt.Errorf("events:ListTargetsByRule %s: %w", rn, err)
		}
		var stray []string
		for _, t := range targets.Targets {
			if aws.ToString(t.Id) != queueTargetID {
				stray = append(stray, aws.ToString(t.Id))
			}
		}
		if len(stray) > 0 {
			if _, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rn), Ids: stray}); err != nil {
				return fmt.Errorf("events:RemoveTargets %s: %w", rn, err)
			}
		}
		if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rn), Targets: []ebtypes.Target{{Id: aws.String(queueTargetID), Arn: aws.String(arn)}}}); err != nil {
			return fmt.Errorf("events:PutTargets %s: %w", rn, err)
		}
		// Rules an earlier version named by cutting a long queue name
		// without a hash: the queue's own are removed once replaced.
		if legacy := legacyRuleName(rule, name); legacy != rn {
			if err := deleteOwnRule(ctx, eb, legacy, name, arn); err != nil {
				return err
			}
		}
	}
	return nil
}

// read fills m from AWS; found is false when the queue is gone.
func (r *InterruptionQueueResource) read(ctx context.Context, q *sqs.Client, eb *eventbridge.Client, m *interruptionQueueModel, diags *diag.Diagnostics) (found bool) {
	name := m.Name.ValueString()
	u, err := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if isAWSCode(err, "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist") {
		return false
	}
	if err != nil {
		diags.AddError("Reading the interruption queue", fmt.Sprintf("sqs:GetQueueUrl %s: %v", name, err))
		return true
	}
	url := aws.ToString(u.QueueUrl)
	out, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		diags.AddError("Reading the interruption queue", fmt.Sprintf("sqs:GetQueueAttributes %s: %v", name, err))
		return true
	}
	a := out.Attributes
	m.ID, m.URL, m.ARN = types.StringValue(name), types.StringValue(url), types.StringValue(a["QueueArn"])
	retention, _ := strconv.ParseInt(a["MessageRetentionPeriod"], 10, 64)
	m.MessageRetentionSeconds = types.Int64Value(retention)
	m.KMSMasterKeyID = types.StringNull()
	if k := a["KmsMasterKeyId"]; k != "" {
		m.KMSMasterKeyID = types.StringValue(k)
	}
	m.SQSManagedSSEEnabled = types.BoolValue(a["SqsManagedSseEnabled"] == "true")
	m.KMSDataKeyReusePeriod = types.Int64Null()
	if a["KmsMasterKeyId"] != "" {
		reuse, err := strconv.ParseInt(a["KmsDataKeyReusePeriodSeconds"], 10, 64)
		if err != nil {
			reuse = defaultDataKeyReuseSeconds
		}
		m.KMSDataKeyReusePeriod = types.Int64Value(reuse)
	}
	// Keep the canonical text when the stored policy means the same.
	m.Policy = types.StringValue(a["Policy"])
	if m.PolicyStatements.IsNull() {
		// Imported: the statements beyond the queue's own are the added ones.
		var added []map[string]any
		for _, st := range documentStatements(a["Policy"]) {
			if sid := st["Sid"]; sid != "AllowEventDelivery" && sid != "DenyHTTP" {
				added = append(added, st)
			}
		}
		m.PolicyStatements = statementsValue(added)
	}
	extra, _ := renderStatements(ctx, m.PolicyStatements, "policy_statements", resourceStatements, &diag.Diagnostics{})
	if want := queuePolicy(a["QueueArn"], m.ruleBase(), extra); sameJSON(a["Policy"], want) {
		m.Policy = types.StringValue(want)
	}
	tags, err := q.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	if err != nil {
		diags.AddError("Reading the interruption queue", fmt.Sprintf("sqs:ListQueueTags %s: %v", name, err))
		return true
	}
	m.Tags = tagsValue(m.Tags, tags.Tags)
	rules := map[string]queueRule{}
	for _, rule := range queue.Rules {
		rn := rule.RuleName(m.ruleBase())
		d, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(rn)})
		if isAWSCode(err, "ResourceNotFoundException") {
			continue
		}
		if err != nil {
			diags.AddError("Reading the interruption queue's rules", fmt.Sprintf("events:DescribeRule %s: %v", rn, err))
			return true
		}
		got := queueRule{Name: rn, ARN: aws.ToString(d.Arn), EventPattern: aws.ToString(d.EventPattern), State: string(d.State), Targets: []string{}}
		if sameJSON(got.EventPattern, rule.Pattern()) {
			got.EventPattern = rule.Pattern()
		}
		targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rn)})
		if err != nil {
			diags.AddError("Reading the interruption queue's rules", fmt.Sprintf("events:ListTargetsByRule %s: %v", rn, err))
			return true
		}
		for _, t := range targets.Targets {
			got.Targets = append(got.Targets, aws.ToString(t.Arn))
		}
		sort.Strings(got.Targets)
		rules[rule.Key] = got
	}
	m.Rules, m.RuleARNs = rulesValues(rules)
	return true
}

func (r *InterruptionQueueResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state interruptionQueueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	q, eb, ok := r.clients2(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	if state.URL.IsNull() {
		// Imported: the rules tell the prefix their names begin with.
		prefix, err := importedRulePrefix(ctx, eb, state.Name.ValueString())
		if err != nil {
			resp.Diagnostics.AddError("Importing the interruption queue", err.Error())
			return
		}
		state.RuleNamePrefix = prefix
	}
	if !r.read(ctx, q, eb, &state, &resp.Diagnostics) {
		resp.State.RemoveResource(ctx)
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

func (r *InterruptionQueueResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer settlePartial(&resp.State, &resp.Diagnostics)
	var plan, state interruptionQueueModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	q, eb, ok := r.clients2(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	plan.URL, plan.ARN, plan.ID = state.URL, state.ARN, state.ID
	oldTags := stringMap(ctx, state.Tags, &resp.Diagnostics)
	if err := r.apply(ctx, q, eb, &plan, oldTags, stringMap(ctx, plan.Tags, &resp.Diagnostics)); err != nil {
		resp.Diagnostics.AddError("Updating the interruption queue", err.Error())
		return
	}
	if old, base := state.ruleBase(), plan.ruleBase(); old != base {
		// Renamed rules: the old ones go once the new ones route events.
		for _, rule := range queue.Rules {
			if err := deleteOwnRule(ctx, eb, rule.RuleName(old), plan.Name.ValueString(), plan.ARN.ValueString()); err != nil {
				resp.Diagnostics.AddError("Removing the renamed rules", err.Error())
				return
			}
		}
	}
	r.read(ctx, q, eb, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *InterruptionQueueResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state interruptionQueueModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	q, eb, ok := r.clients2(ctx, &resp.Diagnostics)
	if resp.Diagnostics.HasError() || !ok {
		return
	}
	name, arn := state.Name.ValueString(), state.ARN.ValueString()
	if arn == "" {
		// A create that failed before reading the ARN: ask the queue.
		if a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(state.URL.ValueString()),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}}); err == nil {
			arn = a.Attributes["QueueArn"]
		}
	}
	for _, rule := range queue.Rules {
		names := []string{rule.RuleName(state.ruleBase())}
		if legacy := legacyRuleName(rule, name); legacy != names[0] {
			names = append(names, legacy)
		}
		for _, rn := range names {
			if err := deleteOwnRule(ctx, eb, rn, name, arn); err != nil {
				resp.Diagnostics.AddError("Deleting the interruption queue's rules", err.Error())
				return
			}
		}
	}
	if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(state.URL.ValueString())}); err != nil &&
		!isAWSCode(err, "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist") {
		resp.Diagnostics.AddError("Deleting the interruption queue", fmt.Sprintf("sqs:DeleteQueue %s: %v", name, err))
	}
}

// defaultDataKeyReuseSeconds is SQS's default data key reuse period.
const defaultDataKeyReuseSeconds = 300

// queuePolicy is the queue's own policy, which lets its rules (named from
// ruleBase) send, with the statements users add.
func queuePolicy(queueARN, ruleBase string, extra []map[string]any) string {
	own := queue.QueuePolicy(queueARN, ruleBase)
	if len(extra) == 0 {
		return own
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(own), &doc); err != nil {
		panic(err)
	}
	statements, _ := doc["Statement"].([]any)
	for _, st := range extra {
		statements = append(statements, st)
	}
	doc["Statement"] = statements
	return mustJSON(doc)
}

func (r *InterruptionQueueResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}
