package eventbridge

import (
	"fmt"
	"net/http"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
)

func clientError(shape, format string, args ...any) *awsjson.Error {
	return &awsjson.Error{Status: http.StatusBadRequest, Type: shape, Message: fmt.Sprintf(format, args...), Sender: true}
}

func errRuleNotFound(name string) *awsjson.Error {
	return clientError("ResourceNotFoundException", "Rule %s does not exist on EventBus %s.", name, defaultBus)
}

func errValidation(format string, args ...any) *awsjson.Error {
	return clientError("ValidationException", format, args...)
}
