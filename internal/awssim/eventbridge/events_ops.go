package eventbridge

import (
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

type putEventsEntry struct {
	Time         *float64
	Source       string
	Resources    []string
	DetailType   string
	Detail       string
	EventBusName string
}

type putEventsResult struct {
	EventId      string `json:",omitempty"`
	ErrorCode    string `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`
}

// putEvents publishes custom events. Sources starting with "aws." are
// reserved for AWS services and rejected per entry, as in EventBridge.
func (s *Service) putEvents(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct{ Entries []putEventsEntry }
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	out := struct {
		FailedEntryCount int
		Entries          []putEventsResult
	}{}
	for _, e := range in.Entries {
		r := s.putEntry(e)
		if r.ErrorCode != "" {
			out.FailedEntryCount++
		}
		out.Entries = append(out.Entries, r)
	}
	return out, nil
}

func (s *Service) putEntry(e putEventsEntry) putEventsResult {
	switch {
	case e.Source == "":
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameter Source is not valid. Reason: Source is a required argument."}
	case e.DetailType == "":
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameter DetailType is not valid. Reason: DetailType is a required argument."}
	case e.Detail == "":
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Parameter Detail is not valid. Reason: Detail is a required argument."}
	case !isObject([]byte(e.Detail)):
		return putEventsResult{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."}
	case strings.HasPrefix(e.Source, "aws."):
		return putEventsResult{ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "Not authorized for the source."}
	case !s.busOK(e.EventBusName):
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: "Event bus " + e.EventBusName + " does not exist."}
	}
	var when time.Time
	if e.Time != nil {
		sec, frac := math.Modf(*e.Time)
		when = time.Unix(int64(sec), int64(frac*1e9))
	}
	id, err := s.PutEvent(Event{
		Source:     e.Source,
		DetailType: e.DetailType,
		Detail:     json.RawMessage(e.Detail),
		Resources:  e.Resources,
		Time:       when,
	})
	if err != nil {
		return putEventsResult{ErrorCode: "InvalidArgument", ErrorMessage: err.Error()}
	}
	return putEventsResult{EventId: id}
}
