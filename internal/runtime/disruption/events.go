package disruption

import "github.com/joistdev/terraform-provider-joist/internal/runtime/events"

// Event reasons (Karpenter's names).
const (
	reasonDisruptionBlocked          = "DisruptionBlocked"
	reasonUnconsolidatable           = "Unconsolidatable"
	reasonConsolidationApproved      = "ConsolidationApproved"
	reasonDisruptionLaunching        = "DisruptionLaunching"
	reasonDisruptionWaitingReadiness = "DisruptionWaitingReadiness"
	reasonDisruptionTerminating      = events.DisruptionTerminating
	reasonNodeRepairBlocked          = "NodeRepairBlocked"
	actionDisrupt                    = events.ActionDisrupt
	actionRepair                     = "Repairing"
)
