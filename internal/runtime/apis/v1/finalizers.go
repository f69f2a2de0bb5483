package v1

// Finalizers the runtime puts on objects it must clean up after.
const (
	// TerminationFinalizer keeps NodeClaims and Nodes until their instance is
	// drained and terminated.
	TerminationFinalizer = Group + "/termination"
	// AWSTerminationFinalizer keeps an EC2NodeClass until no NodeClaim uses it
	// and its launch templates and managed instance profile are deleted.
	AWSTerminationFinalizer = AWSGroup + "/termination"
)
