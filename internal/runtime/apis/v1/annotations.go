package v1

// Annotations the runtime reads or writes (spec 2.4).
const (
	// DoNotDisruptAnnotationKey on a Pod ("true" or a positive duration from
	// the pod's start) or a Node ("true") blocks voluntary disruption.
	DoNotDisruptAnnotationKey = Group + "/do-not-disrupt"
	// DoNotRepairAnnotationKey on a Node ("true") keeps node repair from
	// replacing it, whatever its conditions.
	DoNotRepairAnnotationKey = Group + "/do-not-repair"

	// NodePoolHashAnnotationKey and NodePoolHashVersionAnnotationKey carry the
	// NodePool static-drift hash (see NodePool.Hash) on NodePools and NodeClaims.
	NodePoolHashAnnotationKey        = Group + "/nodepool-hash"
	NodePoolHashVersionAnnotationKey = Group + "/nodepool-hash-version"

	// NodeClaimTerminationTimestampAnnotationKey holds the RFC3339 deadline
	// after which draining is forced (deletion time + terminationGracePeriod).
	NodeClaimTerminationTimestampAnnotationKey = Group + "/nodeclaim-termination-timestamp"

	// NodeClaimMinValuesRelaxedAnnotationKey ("true"/"false") says whether
	// minValues had to be relaxed to launch the NodeClaim.
	NodeClaimMinValuesRelaxedAnnotationKey = Group + "/nodeclaim-min-values-relaxed"

	// EC2NodeClassHashAnnotationKey and EC2NodeClassHashVersionAnnotationKey
	// carry the EC2NodeClass static-drift hash on EC2NodeClasses and NodeClaims.
	EC2NodeClassHashAnnotationKey        = AWSGroup + "/ec2nodeclass-hash"
	EC2NodeClassHashVersionAnnotationKey = AWSGroup + "/ec2nodeclass-hash-version"

	// TaggedAnnotationKey marks a NodeClaim whose instance got its Name and
	// ownership tags after registration.
	TaggedAnnotationKey = AWSGroup + "/tagged"
	// ClusterNameTaggedAnnotationKey marks a NodeClaim whose instance carries
	// the eks:eks-cluster-name tag.
	ClusterNameTaggedAnnotationKey = "compatibility." + AWSGroup + "/cluster-name-tagged"
	// InstanceProfileNameAnnotationKey records, on a NodeClaim, the instance
	// profile its instance launched with.
	InstanceProfileNameAnnotationKey = AWSGroup + "/instance-profile-name"

	// ReplacementForAnnotationKey on a NodeClaim a disruption command
	// created names the NodeClaims it replaces (comma-separated), so a
	// leader that takes over while the command waits for it finishes the
	// command instead of disrupting those nodes again. Joist's own.
	ReplacementForAnnotationKey = "joist.dev/replacement-for"
)
