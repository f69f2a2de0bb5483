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
	// reasonUnmanagedInstance is Joist's: the instance was left running.
	reasonUnmanagedInstance = "UnmanagedInstance"
	actionDrain             = "Draining"
	actionTerminate         = "Terminating"
)
