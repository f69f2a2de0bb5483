package termination

// Event reasons of termination (Karpenter's names).
const (
	reasonEvicted                        = "Evicted"
	reasonFailedDraining                 = "FailedDraining"
	reasonDisruptionBlocked              = "DisruptionBlocked"
	reasonTerminationGracePeriodExpiring = "TerminationGracePeriodExpiring"
	reasonAwaitingVolumeDetachment       = "AwaitingVolumeDetachment"
	reasonInstanceTerminating            = "InstanceTerminating"
	reasonFailedTermination              = "FailedTermination"
	actionDrain                          = "Draining"
	actionTerminate                      = "Terminating"
)
