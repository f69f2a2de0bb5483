// Package awsquery holds the wire pieces shared by the services that speak
// the awsQuery protocol with XML responses (IAM, STS): reading the Action and
// indexed list parameters from the form, and writing the
// <ActionResponse><ActionResult> envelope and <ErrorResponse> errors.
package awsquery
