package disruption

// Event reasons (Karpenter's names).
const (
	reasonDisruptionBlocked          = "DisruptionBlocked"
	reasonUnconsolidatable           = "Unconsolidatable"
	reasonConsolidationApproved      = "ConsolidationApproved"
	reasonDisruptionLaunching        = "DisruptionLaunching"
	reasonDisruptionWaitingReadiness = "DisruptionWaitingReadiness"
	reasonDisruptionTerminating      = "DisruptionTerminating"
	reasonNodeRepairBlocked          = "NodeRepairBlocked"
	actionDisrupt                    = "Disrupting"
	actionRepair                     = "Repairing"
)
