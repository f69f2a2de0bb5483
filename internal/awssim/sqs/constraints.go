package sqs

import (
	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
)

// constraints are SQS's model constraints on the operations' top-level
// input members: all of them members a request must carry.
var constraints = func() c.Operations {
	str := func(m string) c.Rule { return c.Rule{Member: m, Type: "string"}.Req() }
	list := func(m string) c.Rule { return c.List(m, c.None, c.None).Req() }
	url, handle := str("QueueUrl"), str("ReceiptHandle")
	return c.Operations{
		"CreateQueue":                  {str("QueueName")},
		"GetQueueUrl":                  {str("QueueName")},
		"GetQueueAttributes":           {url},
		"SetQueueAttributes":           {url, c.Map("Attributes", c.None, c.None).Req()},
		"DeleteQueue":                  {url},
		"PurgeQueue":                   {url},
		"SendMessage":                  {url, str("MessageBody")},
		"ReceiveMessage":               {url},
		"DeleteMessage":                {url, handle},
		"ChangeMessageVisibility":      {url, handle, c.Integer("VisibilityTimeout", c.None, c.None).Req()},
		"SendMessageBatch":             {url, list("Entries")},
		"DeleteMessageBatch":           {url, list("Entries")},
		"ChangeMessageVisibilityBatch": {url, list("Entries")},
		"TagQueue":                     {url, c.Map("Tags", c.None, c.None).Req()},
		"UntagQueue":                   {url, list("TagKeys")},
		"ListQueueTags":                {url},
	}
}()

// Operations lists the operations served, each with its constraints.
func (s *Service) Operations() c.Operations { return s.dispatcher.Operations() }

// invalid is SQS's answer to a broken constraint, under the query error
// codes the SDK reports.
func invalid(v *c.Violation) *awsjson.Error {
	if v.Kind == "required" {
		return errMissingParameter(v.Member)
	}
	return errInvalidParameterValue("Value %s for parameter %s is invalid. Reason: %s.", v.Value, v.Member, v.Message)
}
