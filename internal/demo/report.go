package demo

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Write prints the summary table: a row per phase with the state it left.
func (r *Report) Write(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PHASE\tTOOK\tNODES\tINSTANCE TYPES\tCAPACITY\t$/H\tPODS PENDING/RUNNING")
	for _, p := range r.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%.3f\t%d/%d\n",
			p.Name, p.Took.Round(time.Second), p.Nodes, counts(p.InstanceTypes), counts(p.CapacityTypes), p.CostPerHour, p.Pending, p.Running)
	}
	tw.Flush()
}
