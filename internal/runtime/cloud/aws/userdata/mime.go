package userdata

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
)

// Part is one part of a MIME multipart user data document.
type Part struct {
	ContentType string
	Body        string
}

// Content types of user data parts.
const (
	ContentTypeShell      = "text/x-shellscript"
	ContentTypeNodeConfig = "application/node.eks.aws"
)

const boundary = "//"

// IsMIME reports whether user data is a MIME multipart document.
func IsMIME(s string) bool {
	return strings.HasPrefix(strings.TrimSpace(s), "MIME-Version:")
}

// ParseMIME splits a MIME multipart document into its parts.
func ParseMIME(s string) ([]Part, error) {
	msg, err := mail.ReadMessage(strings.NewReader(strings.TrimSpace(s) + "\n"))
	if err != nil {
		return nil, fmt.Errorf("user data looks like MIME but its headers do not parse: %w", err)
	}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || !strings.HasPrefix(mediaType, "multipart/") {
		return nil, fmt.Errorf("user data MIME document must be multipart with a boundary, got Content-Type %q", msg.Header.Get("Content-Type"))
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	var out []Part
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading user data MIME part %d: %w", len(out)+1, err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			return nil, fmt.Errorf("reading user data MIME part %d: %w", len(out)+1, err)
		}
		ct := p.Header.Get("Content-Type")
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			ct = mt
		}
		out = append(out, Part{ContentType: ct, Body: string(body)})
	}
}

// WriteMIME renders parts as a MIME multipart document.
func WriteMIME(parts []Part) string {
	var b bytes.Buffer
	b.WriteString("MIME-Version: 1.0\n")
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=%q\n\n", boundary)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\nContent-Type: %s; charset=\"us-ascii\"\n\n", boundary, p.ContentType)
		b.WriteString(p.Body)
		if !strings.HasSuffix(p.Body, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.String()
}

// customParts turns a node class's user data into parts: MIME documents
// keep their parts; anything else becomes a single part of the given type
// (or a NodeConfig part if it looks like one).
func customParts(custom *string, fallback string) ([]Part, error) {
	if custom == nil || strings.TrimSpace(*custom) == "" {
		return nil, nil
	}
	if IsMIME(*custom) {
		return ParseMIME(*custom)
	}
	ct := fallback
	if strings.Contains(*custom, "node.eks.aws/") && strings.Contains(*custom, "NodeConfig") {
		ct = ContentTypeNodeConfig
	}
	return []Part{{ContentType: ct, Body: *custom}}, nil
}
