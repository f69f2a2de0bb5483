package sqs

import (
	"fmt"
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

// senderError is a client error with the SQS namespace and the legacy query
// code the SDK reports as the error code.
func senderError(shape, queryCode, message string) *awsjson.Error {
	return &awsjson.Error{
		Status:    http.StatusBadRequest,
		Namespace: "com.amazonaws.sqs",
		Type:      shape,
		QueryCode: queryCode,
		Message:   message,
		Sender:    true,
	}
}

func errQueueDoesNotExist() *awsjson.Error {
	return senderError("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "The specified queue does not exist.")
}

func errQueueNameExists(attribute string) *awsjson.Error {
	return senderError("QueueNameExists", "QueueAlreadyExists",
		"A queue already exists with the same name and a different value for attribute "+attribute)
}

func errInvalidAttributeName(name string) *awsjson.Error {
	return senderError("InvalidAttributeName", "InvalidAttributeName", "Unknown Attribute "+name+".")
}

func errInvalidAttributeValue(name string) *awsjson.Error {
	return senderError("InvalidAttributeValue", "InvalidAttributeValue", "Invalid value for the parameter "+name+".")
}

func errInvalidParameterValue(format string, args ...any) *awsjson.Error {
	return senderError("InvalidParameterValueException", "InvalidParameterValue", fmt.Sprintf(format, args...))
}

func errMissingParameter(name string) *awsjson.Error {
	return senderError("MissingParameter", "MissingParameter", "The request must contain the parameter "+name+".")
}

func errReceiptHandleIsInvalid(handle string) *awsjson.Error {
	return senderError("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid",
		fmt.Sprintf("The input receipt handle %q is not a valid receipt handle.", handle))
}

func errMessageNotInflight() *awsjson.Error {
	return senderError("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", "Message does not exist or is not available for visibility timeout change.")
}
