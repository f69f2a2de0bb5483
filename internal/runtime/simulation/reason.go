package simulation

import (
	"fmt"
	"regexp"
	"strings"
)

var poolReason = regexp.MustCompile(`nodepool "[^"]*": `)

// nodePoolMismatch starts the reason of a NodePool the pod ruled out by
// naming another one.
const nodePoolMismatch = "incompatible requirements: key karpenter.sh/nodepool:"

// ConciseReason shortens a scheduling error for the pod's event: reasons
// of NodePools the pod excluded itself (by its karpenter.sh/nodepool
// requirement) are counted instead of listed, so the reasons that matter
// fit in the event.
func ConciseReason(err error) string {
	msg := err.Error()
	idx := poolReason.FindAllStringIndex(msg, -1)
	if len(idx) < 2 {
		return msg
	}
	var kept []string
	dropped := 0
	for i, loc := range idx {
		end := len(msg)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		seg := strings.TrimSuffix(strings.TrimSpace(msg[loc[0]:end]), ";")
		if strings.HasPrefix(msg[loc[1]:end], nodePoolMismatch) {
			dropped++
			continue
		}
		kept = append(kept, seg)
	}
	if dropped == 0 {
		return msg
	}
	out := msg[:idx[0][0]] + strings.Join(kept, "; ")
	if len(kept) > 0 {
		out += "; "
	}
	return out + fmt.Sprintf("%d other NodePool(s) excluded by the pod's %s requirement", dropped, "karpenter.sh/nodepool")
}
