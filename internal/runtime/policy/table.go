package policy

// The table: every action the controller is granted, grouped into the
// statements that scope it, and for each action the runtime's AWS calls
// that need it ("service:Operation", the SDK client and operation). Tests
// scan the runtime's source for SDK calls and check both directions, so a
// new call without a grant, or a grant nothing calls, fails the build.

// Group names the managed policy a statement goes to when the document is
// split (Karpenter's CloudFormation split).
type Group string

const (
	NodeLifecycle     Group = "NodeLifecycle"
	IAMIntegration    Group = "IAMIntegration"
	EKSIntegration    Group = "EKSIntegration"
	Interruption      Group = "Interruption"
	ResourceDiscovery Group = "ResourceDiscovery"
)

// Action is one IAM action and the runtime calls it authorizes.
type Action struct {
	Name     string   // e.g. ec2:CreateFleet
	NeededBy []string // SDK calls, e.g. ec2:CreateFleet; tag-on-create and PassRole are needed by the call that creates
}

// Rule is one statement of the policy before rendering.
type Rule struct {
	Sid       string
	Group     Group
	Actions   []Action
	Resources func(p Params) []string
	Condition func(p Params) Condition
	// Optional rules are left out when their input is missing (no queue:
	// no interruption statement).
	Optional func(p Params) bool
}

// Launch inputs CreateFleet/RunInstances use but do not create: public
// images and snapshots have no account in their ARN; subnets, security
// groups, reservations and placement groups may be shared from another
// account.
var (
	launchPublicResources = []string{"image", "snapshot"}
	launchSharedResources = []string{"security-group", "subnet", "capacity-reservation", "placement-group"}
)

// createdResources are what CreateFleet/RunInstances/CreateLaunchTemplate create and tag.
var createdResources = []string{"fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request"}

// launch is the actions a launch is checked against on every resource.
var launch = []Action{
	{Name: "ec2:RunInstances", NeededBy: []string{"ec2:CreateFleet", "ec2:RunInstances"}},
	{Name: "ec2:CreateFleet", NeededBy: []string{"ec2:CreateFleet"}},
}

// Rules is the controller's policy.
var Rules = []Rule{
	{
		Sid: "AllowScopedEC2InstanceAccessActions", Group: NodeLifecycle, Actions: launch,
		Resources: func(p Params) []string {
			return append(p.ec2ARNs("", launchPublicResources), p.ec2ARNs("*", launchSharedResources)...)
		},
		Condition: func(p Params) Condition { return nil },
	},
	{
		Sid: "AllowScopedEC2LaunchTemplateAccessActions", Group: NodeLifecycle, Actions: launch,
		Resources: func(p Params) []string { return p.ec2ARNs(p.AccountID, []string{"launch-template"}) },
		Condition: func(p Params) Condition {
			return Condition{
				"StringEquals": {"aws:ResourceTag/" + p.clusterTag(): {"owned"}},
				"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
			}
		},
	},
	{
		Sid: "AllowScopedEC2InstanceActionsWithTags", Group: NodeLifecycle,
		Actions:   append(append([]Action{}, launch...), Action{Name: "ec2:CreateLaunchTemplate", NeededBy: []string{"ec2:CreateLaunchTemplate"}}),
		Resources: func(p Params) []string { return p.ec2ARNs(p.AccountID, createdResources) },
		Condition: func(p Params) Condition { return p.requestTagsOwned("karpenter.sh/nodepool") },
	},
	{
		Sid: "AllowScopedResourceCreationTagging", Group: NodeLifecycle,
		Actions:   []Action{{Name: "ec2:CreateTags", NeededBy: []string{"ec2:CreateFleet", "ec2:CreateLaunchTemplate", "ec2:RunInstances"}}},
		Resources: func(p Params) []string { return p.ec2ARNs(p.AccountID, createdResources) },
		Condition: func(p Params) Condition {
			c := p.requestTagsOwned("karpenter.sh/nodepool")
			c["StringEquals"]["ec2:CreateAction"] = []string{"RunInstances", "CreateFleet", "CreateLaunchTemplate"}
			return c
		},
	},
	{
		Sid: "AllowScopedResourceTagging", Group: NodeLifecycle,
		Actions:   []Action{{Name: "ec2:CreateTags", NeededBy: []string{"ec2:CreateTags"}}},
		Resources: func(p Params) []string { return p.ec2ARNs(p.AccountID, []string{"instance"}) },
		Condition: func(p Params) Condition {
			return Condition{
				"StringEquals":              {"aws:ResourceTag/" + p.clusterTag(): {"owned"}},
				"StringLike":                {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
				"StringEqualsIfExists":      {"aws:RequestTag/eks:eks-cluster-name": {p.ClusterName}},
				"ForAllValues:StringEquals": {"aws:TagKeys": {"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"}},
			}
		},
	},
	{
		Sid: "AllowScopedDeletion", Group: NodeLifecycle,
		Actions: []Action{
			{Name: "ec2:TerminateInstances", NeededBy: []string{"ec2:TerminateInstances"}},
			{Name: "ec2:DeleteLaunchTemplate", NeededBy: []string{"ec2:DeleteLaunchTemplate"}},
		},
		Resources: func(p Params) []string { return p.ec2ARNs(p.AccountID, []string{"instance", "launch-template"}) },
		Condition: func(p Params) Condition {
			return Condition{
				"StringEquals": {"aws:ResourceTag/" + p.clusterTag(): {"owned"}},
				"StringLike":   {"aws:ResourceTag/karpenter.sh/nodepool": {"*"}},
			}
		},
	},
	{
		Sid: "AllowRegionalReadActions", Group: ResourceDiscovery,
		Actions: []Action{
			{Name: "ec2:DescribeCapacityReservations", NeededBy: []string{"ec2:DescribeCapacityReservations"}},
			{Name: "ec2:DescribeImages", NeededBy: []string{"ec2:DescribeImages"}},
			{Name: "ec2:DescribeInstances", NeededBy: []string{"ec2:DescribeInstances"}},
			{Name: "ec2:DescribeInstanceStatus", NeededBy: []string{"ec2:DescribeInstanceStatus"}},
			{Name: "ec2:DescribeInstanceTypeOfferings", NeededBy: []string{"ec2:DescribeInstanceTypeOfferings"}},
			{Name: "ec2:DescribeInstanceTypes", NeededBy: []string{"ec2:DescribeInstanceTypes"}},
			{Name: "ec2:DescribeLaunchTemplates", NeededBy: []string{"ec2:DescribeLaunchTemplates"}},
			{Name: "ec2:DescribePlacementGroups", NeededBy: []string{"ec2:DescribePlacementGroups"}},
			{Name: "ec2:DescribeSecurityGroups", NeededBy: []string{"ec2:DescribeSecurityGroups"}},
			{Name: "ec2:DescribeSpotPriceHistory", NeededBy: []string{"ec2:DescribeSpotPriceHistory"}},
			{Name: "ec2:DescribeSubnets", NeededBy: []string{"ec2:DescribeSubnets"}},
		},
		Resources: func(Params) []string { return []string{"*"} },
		Condition: func(p Params) Condition {
			return Condition{"StringEquals": {"aws:RequestedRegion": {p.Region}}}
		},
	},
	{
		Sid: "AllowSSMReadActions", Group: ResourceDiscovery,
		Actions: []Action{
			{Name: "ssm:GetParameter", NeededBy: []string{"ssm:GetParameter"}},
			// An AMI alias's variants in one call; without it the
			// controller reads them one by one.
			{Name: "ssm:GetParameters", NeededBy: []string{"ssm:GetParameters"}},
		},
		Resources: func(p Params) []string {
			return append([]string{"arn:" + p.Partition + ":ssm:" + p.Region + "::parameter/aws/service/*"}, p.SSMParameterARNs...)
		},
		Condition: func(Params) Condition { return nil },
	},
	{
		Sid: "AllowPricingReadActions", Group: ResourceDiscovery,
		Actions:   []Action{{Name: "pricing:GetProducts", NeededBy: []string{"pricing:GetProducts"}}},
		Resources: func(Params) []string { return []string{"*"} },
		Condition: func(Params) Condition { return nil },
	},
	{
		Sid: "AllowInterruptionQueueActions", Group: Interruption,
		Actions: []Action{
			{Name: "sqs:DeleteMessage", NeededBy: []string{"sqs:DeleteMessageBatch"}},
			{Name: "sqs:GetQueueUrl", NeededBy: []string{"sqs:GetQueueUrl"}},
			{Name: "sqs:ReceiveMessage", NeededBy: []string{"sqs:ReceiveMessage"}},
		},
		Resources: func(p Params) []string { return []string{p.queueARN()} },
		Condition: func(Params) Condition { return nil },
		Optional:  func(p Params) bool { return p.QueueName != "" },
	},
	{
		// An SSE-KMS queue: SQS decrypts each message for its reader with
		// the reader's permission on the key, only through SQS. Reading is
		// all the controller does, so kms:GenerateDataKey (a sender's) is
		// not granted.
		Sid: "AllowInterruptionQueueDecryption", Group: Interruption,
		Actions:   []Action{{Name: "kms:Decrypt", NeededBy: []string{"sqs:ReceiveMessage"}}},
		Resources: func(p Params) []string { return []string{p.QueueKMSKeyARN} },
		Condition: func(p Params) Condition {
			return Condition{"StringEquals": {"kms:ViaService": {"sqs." + p.Region + ".amazonaws.com"}}}
		},
		Optional: func(p Params) bool { return p.QueueName != "" && p.QueueKMSKeyARN != "" },
	},
	{
		Sid: "AllowPassingInstanceRole", Group: IAMIntegration,
		Actions:   []Action{{Name: "iam:PassRole", NeededBy: []string{"iam:AddRoleToInstanceProfile", "ec2:CreateFleet"}}},
		Resources: func(p Params) []string { return []string{p.NodeRoleARN} },
		Condition: func(p Params) Condition {
			return Condition{"StringEquals": {"iam:PassedToService": {"ec2.amazonaws.com", "ec2.amazonaws.com.cn"}}}
		},
	},
	{
		Sid: "AllowScopedInstanceProfileCreationActions", Group: IAMIntegration,
		Actions:   []Action{{Name: "iam:CreateInstanceProfile", NeededBy: []string{"iam:CreateInstanceProfile"}}},
		Resources: func(p Params) []string { return []string{p.instanceProfileARN()} },
		Condition: func(p Params) Condition {
			c := p.requestTagsOwned("karpenter.k8s.aws/ec2nodeclass")
			c["StringEquals"]["aws:RequestTag/topology.kubernetes.io/region"] = []string{p.Region}
			return c
		},
	},
	{
		Sid: "AllowScopedInstanceProfileTagActions", Group: IAMIntegration,
		Actions:   []Action{{Name: "iam:TagInstanceProfile", NeededBy: []string{"iam:CreateInstanceProfile"}}},
		Resources: func(p Params) []string { return []string{p.instanceProfileARN()} },
		Condition: func(p Params) Condition {
			c := merge(p.profileResourceTags(), p.requestTagsOwned("karpenter.k8s.aws/ec2nodeclass"))
			c["StringEquals"]["aws:RequestTag/topology.kubernetes.io/region"] = []string{p.Region}
			return c
		},
	},
	{
		Sid: "AllowScopedInstanceProfileActions", Group: IAMIntegration,
		Actions: []Action{
			{Name: "iam:AddRoleToInstanceProfile", NeededBy: []string{"iam:AddRoleToInstanceProfile"}},
			{Name: "iam:RemoveRoleFromInstanceProfile", NeededBy: []string{"iam:RemoveRoleFromInstanceProfile"}},
			{Name: "iam:DeleteInstanceProfile", NeededBy: []string{"iam:DeleteInstanceProfile"}},
		},
		Resources: func(p Params) []string { return []string{p.instanceProfileARN()} },
		Condition: func(p Params) Condition { return p.profileResourceTags() },
	},
	{
		// Garbage collection lists the profiles under the cluster's path;
		// IAM scopes listing by path, not by tag, so it is unscoped.
		Sid: "AllowUnscopedInstanceProfileListAction", Group: IAMIntegration,
		Actions:   []Action{{Name: "iam:ListInstanceProfiles", NeededBy: []string{"iam:ListInstanceProfiles"}}},
		Resources: func(Params) []string { return []string{"*"} },
		Condition: func(Params) Condition { return nil },
	},
	{
		Sid: "AllowInstanceProfileReadActions", Group: IAMIntegration,
		Actions:   []Action{{Name: "iam:GetInstanceProfile", NeededBy: []string{"iam:GetInstanceProfile"}}},
		Resources: func(p Params) []string { return []string{p.instanceProfileARN()} },
		Condition: func(Params) Condition { return nil },
	},
	{
		Sid: "AllowAPIServerEndpointDiscovery", Group: EKSIntegration,
		Actions:   []Action{{Name: "eks:DescribeCluster", NeededBy: []string{"eks:DescribeCluster"}}},
		Resources: func(p Params) []string { return []string{p.clusterARN()} },
		Condition: func(Params) Condition { return nil },
	},
}
