package eventbridge

import (
	"encoding/json"
	"regexp"
)

var namePattern = regexp.MustCompile(`^[\.\-_A-Za-z0-9]{1,64}$`)

// rule is one rule on the default bus. Fields are guarded by Service.mu.
type rule struct {
	name         string
	arn          string
	eventPattern string   // as given
	pattern      *Pattern // compiled eventPattern; nil for schedule rules
	schedule     string
	state        string
	description  string
	roleARN      string
	tags         map[string]string
	targets      []*target // in the order first put
}

// target is one rule target; raw is the target as given, echoed back by
// ListTargetsByRule.
type target struct {
	id        string
	arn       string
	input     string
	inputPath string
	raw       json.RawMessage
}

func (s *Service) ruleARN(name string) string {
	return "arn:aws:events:" + s.region + ":" + s.account + ":rule/" + name
}

// busOK reports whether an EventBusName parameter names the default bus.
func (s *Service) busOK(name string) bool {
	return name == "" || name == defaultBus || name == "arn:aws:events:"+s.region+":"+s.account+":event-bus/"+defaultBus
}

// findTarget returns the index of the target with the ID, or -1.
func (r *rule) findTarget(id string) int {
	for i, t := range r.targets {
		if t.id == id {
			return i
		}
	}
	return -1
}
