package iam

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

var (
	entityName = regexp.MustCompile(`^[\w+=,.@-]+$`)
	pathChars  = regexp.MustCompile(`^/([\x21-\x7E]*/)?$`)
)

// name reads a required entity name parameter (RoleName, PolicyName, …)
// with IAM's character set and length limit.
func name(c *awsquery.Call, param string, max int) (string, *awsquery.Error) {
	v := c.Form.Get(param)
	if v == "" {
		return "", errValidation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", lowerFirst(param))
	}
	if len(v) > max || !entityName.MatchString(v) {
		return "", errValidation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+ and have length at most %d", v, lowerFirst(param), max)
	}
	return v, nil
}

// path reads an optional Path parameter; it defaults to "/" and must begin
// and end with "/".
func path(c *awsquery.Call) (string, *awsquery.Error) {
	p := c.Form.Get("Path")
	if p == "" {
		return "/", nil
	}
	if len(p) > 512 || !pathChars.MatchString(p) {
		return "", errValidation("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return p, nil
}

// document reads a required policy document parameter: a JSON object with a
// Statement. It is stored exactly as given.
func document(c *awsquery.Call, param string) (string, *awsquery.Error) {
	doc := c.Form.Get(param)
	if doc == "" {
		return "", errValidation("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", lowerFirst(param))
	}
	var parsed map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
		return "", errMalformedPolicy()
	}
	if _, ok := parsed["Statement"]; !ok {
		return "", errMalformedPolicy()
	}
	return doc, nil
}

// intParam reads an optional integer parameter within [lo, hi].
func intParam(c *awsquery.Call, param string, def, lo, hi int) (int, *awsquery.Error) {
	v := c.Form.Get(param)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, errValidation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must have value between %d and %d", v, lowerFirst(param), lo, hi)
	}
	return n, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
