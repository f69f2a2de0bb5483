package protocol

import "strings"

// Credential is the credential scope of a SigV4-signed request.
type Credential struct {
	AccessKeyID string
	Date        string
	Region      string
	Service     string
}

// ParseAuthorization reads the credential scope from a SigV4 Authorization
// header ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-west-2/ec2/aws4_request, ...").
func ParseAuthorization(header string) (Credential, bool) {
	i := strings.Index(header, "Credential=")
	if i < 0 {
		return Credential{}, false
	}
	scope := header[i+len("Credential="):]
	if j := strings.IndexAny(scope, ", "); j >= 0 {
		scope = scope[:j]
	}
	parts := strings.Split(scope, "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return Credential{}, false
	}
	return Credential{AccessKeyID: parts[0], Date: parts[1], Region: parts[2], Service: parts[3]}, true
}
