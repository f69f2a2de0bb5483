package sqs

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"sort"
	"strings"
)

// md5Hex is the MD5OfMessageBody the SDK checks against the body it sent.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// md5OfAttributes is MD5OfMessageAttributes as SQS computes it: attributes
// sorted by name, each encoded as length-prefixed name, length-prefixed data
// type, a transport byte (1 string, 2 binary) and the length-prefixed value.
func md5OfAttributes(attrs map[string]MessageAttributeValue) string {
	if len(attrs) == 0 {
		return ""
	}
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	h := md5.New()
	field := func(b []byte) {
		_ = binary.Write(h, binary.BigEndian, uint32(len(b)))
		h.Write(b)
	}
	for _, name := range names {
		v := attrs[name]
		field([]byte(name))
		field([]byte(v.DataType))
		if strings.HasPrefix(v.DataType, "Binary") {
			h.Write([]byte{2})
			field(v.BinaryValue)
		} else {
			h.Write([]byte{1})
			field([]byte(v.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
