package policy

// batchedBy names the API operations IAM authorizes with another
// operation's action: SQS has no action of its own for a batch operation,
// which needs the action of the single operation it batches.
var batchedBy = map[string]string{
	"sqs:DeleteMessageBatch":           "sqs:DeleteMessage",
	"sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
	"sqs:SendMessageBatch":             "sqs:SendMessage",
}

// ActionOf returns the IAM action that authorizes a call of an API
// operation (service is the signing name, e.g. "sqs").
func ActionOf(service, operation string) string {
	call := service + ":" + operation
	if a, ok := batchedBy[call]; ok {
		return a
	}
	return call
}
