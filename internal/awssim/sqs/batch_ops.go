package sqs

import (
	"regexp"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

var batchEntryID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

// maxBatchBytes is the limit on the total body size of SendMessageBatch.
const maxBatchBytes = 1048576

type batchFailure struct {
	Id          string
	SenderFault bool
	Code        string
	Message     string
}

type batchResult[T any] struct {
	Successful []T
	Failed     []batchFailure
}

// checkBatch applies the whole-request rules of the batch operations: 1 to
// 10 entries with distinct, well-formed IDs.
func checkBatch(ids []string) *awsjson.Error {
	if len(ids) == 0 {
		return senderError("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", "There should be at least one SendMessageBatchRequestEntry in the request.")
	}
	if len(ids) > 10 {
		return senderError("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", "Maximum number of entries per request are 10. You have sent more.")
	}
	seen := map[string]bool{}
	for _, id := range ids {
		if !batchEntryID.MatchString(id) {
			return senderError("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return senderError("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct", "Id "+id+" repeated.")
		}
		seen[id] = true
	}
	return nil
}

// runBatch applies one to every entry, collecting successes and per-entry
// failures.
func runBatch[E any, T any](entries []E, id func(E) string, one func(E) (T, *awsjson.Error)) (any, *awsjson.Error) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = id(e)
	}
	if err := checkBatch(ids); err != nil {
		return nil, err
	}
	out := batchResult[T]{Successful: []T{}, Failed: []batchFailure{}}
	for _, e := range entries {
		r, err := one(e)
		if err != nil {
			code := err.QueryCode
			if code == "" {
				code = err.Type
			}
			out.Failed = append(out.Failed, batchFailure{Id: id(e), SenderFault: err.Sender, Code: code, Message: err.Message})
			continue
		}
		out.Successful = append(out.Successful, r)
	}
	return out, nil
}

type sendBatchEntry struct {
	Id string
	sendEntry
}

type sendBatchResult struct {
	Id string
	sendMessageOutput
}

func (s *Service) sendMessageBatch(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		Entries []sendBatchEntry
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		total := 0
		for _, e := range in.Entries {
			total += len(e.MessageBody)
		}
		if total > maxBatchBytes {
			return nil, senderError("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", "Batch requests cannot be longer than 1048576 bytes.")
		}
		return runBatch(in.Entries, func(e sendBatchEntry) string { return e.Id },
			func(e sendBatchEntry) (sendBatchResult, *awsjson.Error) {
				r, err := s.sendOne(c, q, e.sendEntry)
				return sendBatchResult{Id: e.Id, sendMessageOutput: r}, err
			})
	})
}

type handleEntry struct {
	Id                string
	ReceiptHandle     string
	VisibilityTimeout *int
}

type idResult struct{ Id string }

func (s *Service) deleteMessageBatch(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		Entries []handleEntry
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return runBatch(in.Entries, func(e handleEntry) string { return e.Id },
			func(e handleEntry) (idResult, *awsjson.Error) { return idResult{e.Id}, deleteOne(q, e.ReceiptHandle) })
	})
}

func (s *Service) changeMessageVisibilityBatch(c *awsjson.Call) (any, *awsjson.Error) {
	var in struct {
		queueRef
		Entries []handleEntry
	}
	return s.onQueue(c, &in, func(q *queue) (any, *awsjson.Error) {
		return runBatch(in.Entries, func(e handleEntry) string { return e.Id },
			func(e handleEntry) (idResult, *awsjson.Error) {
				return idResult{e.Id}, s.changeVisibilityOne(q, e.ReceiptHandle, e.VisibilityTimeout)
			})
	})
}
