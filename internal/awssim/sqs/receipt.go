package sqs

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// encodeReceipt makes the receipt handle for one receive of a message: opaque
// to callers, but it names the queue and message so it can be resolved.
func encodeReceipt(queue, messageID string, receive uint64) string {
	raw := queue + "\x00" + messageID + "\x00" + strconv.FormatUint(receive, 10)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// decodeReceipt returns the queue name and message ID a receipt handle was
// issued for.
func decodeReceipt(handle string) (queue, messageID string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(handle)
	if err != nil {
		return "", "", false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" {
		return "", "", false
	}
	if _, err := strconv.ParseUint(parts[2], 10, 64); err != nil {
		return "", "", false
	}
	return parts[0], parts[1], true
}
