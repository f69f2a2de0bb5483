package state

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Nomination says a pending pod is expected to run on an existing node or
// an in-flight NodeClaim, so later passes do not provision for it again.
type Nomination struct {
	// Target is a Node name or a NodeClaim name.
	Target   string
	InFlight bool
	Expires  time.Time
}

// Nominate records that pod will run on target until ttl passes.
func (c *Cluster) Nominate(pod types.UID, target string, inFlight bool, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nominations[pod] = Nomination{Target: target, InFlight: inFlight, Expires: c.clock.Now().Add(ttl)}
}

// NominatedTo returns the pod's live nomination.
func (c *Cluster) NominatedTo(pod types.UID) (Nomination, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.liveNomination(pod)
}

func (c *Cluster) liveNomination(pod types.UID) (Nomination, bool) {
	n, ok := c.nominations[pod]
	if !ok {
		return Nomination{}, false
	}
	if !c.clock.Now().Before(n.Expires) {
		delete(c.nominations, pod)
		return Nomination{}, false
	}
	return n, true
}

// forget drops nominations of pods that are bound or gone.
func (c *Cluster) forget(keep map[types.UID]bool) {
	for uid := range c.nominations {
		if !keep[uid] {
			delete(c.nominations, uid)
		}
	}
}
