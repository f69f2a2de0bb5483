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

// name reads an entity name parameter (RoleName, PolicyName, …) in IAM's
// character set; the operation's constraints have checked its presence and
// length.
func name(c *awsquery.Call, param string) (string, *awsquery.Error) {
	v := c.Form.Get(param)
	if !entityName.MatchString(v) {
		return "", errValidation("1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+", v, lowerFirst(param))
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
	if !pathChars.MatchString(p) {
		return "", errValidation("The specified value for path is invalid. It must begin and end with / and contain only alphanumeric characters and/or / characters.")
	}
	return p, nil
}

// document reads a policy document parameter: a JSON object with a
// Statement. It is stored exactly as given.
func document(c *awsquery.Call, param string) (string, *awsquery.Error) {
	doc := c.Form.Get(param)
	var parsed map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &parsed); err != nil {
		return "", errMalformedPolicy()
	}
	if _, ok := parsed["Statement"]; !ok {
		return "", errMalformedPolicy()
	}
	return doc, nil
}

// intParam reads an optional integer parameter; the operation's constraints
// have checked its range.
func intParam(c *awsquery.Call, param string, def int) int {
	n, err := strconv.Atoi(c.Form.Get(param))
	if err != nil {
		return def
	}
	return n
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
