// Package awsjson holds the wire pieces shared by the services that speak the
// awsJson1_0 and awsJson1_1 protocols (SQS, EventBridge): reading the
// operation from X-Amz-Target, decoding the body, and writing results and
// errors in the shapes the real services send.
package awsjson
