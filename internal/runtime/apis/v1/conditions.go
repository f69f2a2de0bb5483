package v1

// ConditionTypeReady is the root condition of every object here: True once
// all of the object's other readiness conditions are True.
const ConditionTypeReady = "Ready"

// NodePool conditions (spec 1.2). Ready = ValidationSucceeded and NodeClassReady;
// NodeRegistrationHealthy is informational and not part of Ready.
const (
	ConditionTypeValidationSucceeded     = "ValidationSucceeded"
	ConditionTypeNodeClassReady          = "NodeClassReady"
	ConditionTypeNodeRegistrationHealthy = "NodeRegistrationHealthy"
)

// NodeClaim conditions (spec 2.3). Ready = Launched, Registered and Initialized.
const (
	ConditionTypeLaunched             = "Launched"
	ConditionTypeRegistered           = "Registered"
	ConditionTypeInitialized          = "Initialized"
	ConditionTypeConsolidatable       = "Consolidatable"
	ConditionTypeDrifted              = "Drifted"
	ConditionTypeDisruptionReason     = "DisruptionReason"
	ConditionTypeDrained              = "Drained"
	ConditionTypeVolumesDetached      = "VolumesDetached"
	ConditionTypeInstanceTerminating  = "InstanceTerminating"
	ConditionTypeConsistentStateFound = "ConsistentStateFound"
)

// EC2NodeClass conditions (spec 3.2). Ready = all of them, as in Karpenter's
// condition set (CapacityReservationsReady only while reserved capacity is on).
const (
	ConditionTypeSubnetsReady              = "SubnetsReady"
	ConditionTypeSecurityGroupsReady       = "SecurityGroupsReady"
	ConditionTypeAMIsReady                 = "AMIsReady"
	ConditionTypeInstanceProfileReady      = "InstanceProfileReady"
	ConditionTypeCapacityReservationsReady = "CapacityReservationsReady"
	ConditionTypePlacementGroupReady       = "PlacementGroupReady"
)

// NodePoolReadyConditions and friends list the conditions whose conjunction
// is each kind's Ready condition.
var (
	NodePoolReadyConditions     = []string{ConditionTypeValidationSucceeded, ConditionTypeNodeClassReady}
	NodeClaimReadyConditions    = []string{ConditionTypeLaunched, ConditionTypeRegistered, ConditionTypeInitialized}
	EC2NodeClassReadyConditions = []string{
		ConditionTypeAMIsReady, ConditionTypeSubnetsReady, ConditionTypeSecurityGroupsReady,
		ConditionTypeInstanceProfileReady, ConditionTypeValidationSucceeded, ConditionTypePlacementGroupReady,
	}
)
