package crdschema

import (
	"strings"
	"unicode"
)

// nameExceptions are CRD field names whose initialisms the general rule
// splits wrongly.
var nameExceptions = map[string]string{
	"httpProtocolIPv6": "http_protocol_ipv6",
}

// TFName is the Terraform attribute name of a CRD field: snake_case, with
// initialisms kept whole (kmsKeyID -> kms_key_id, clusterDNS -> cluster_dns).
func TFName(field string) string {
	if n, ok := nameExceptions[field]; ok {
		return n
	}
	runes := []rune(field)
	var b strings.Builder
	for i, r := range runes {
		if unicode.IsUpper(r) && i > 0 {
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
