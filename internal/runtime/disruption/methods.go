package disruption

// Outcome of one method: a command, or nothing with the reasons candidates
// were passed over (for Unconsolidatable events).
type Outcome struct {
	Command *Command
	// Rejected maps candidates to why they could not be consolidated.
	Rejected map[*Candidate]string
	// Eligible is how many candidates the method considered.
	Eligible int
	// TimedOut is set when the method's time limit cut it short.
	TimedOut bool
	// Moves are the consolidation moves scored (see Move).
	Moves []Move
	// Blocked (DisruptionBlocked events) and RepairBlocked
	// (NodeRepairBlocked events) say why repair passed candidates over.
	Blocked       map[*Candidate]string
	RepairBlocked map[*Candidate]string
}
