package v1

import (
	"encoding/json"
	"fmt"
	"time"
)

// Never is the value of a NillableDuration that disables what it times.
const Never = "Never"

// NillableDuration is a duration that may be "Never" (Duration == nil). On the
// wire it is a Go duration string ("720h", "30m") or "Never", as in Karpenter.
//
// The zero value means Never and is written as "Never": a Go client that
// wants the CRD default must set it (see DefaultExpireAfter).
type NillableDuration struct {
	Duration *time.Duration `json:"-"`

	// Raw keeps the text the duration was read from, so writing the object
	// back gives the user's spelling ("720h", not "720h0m0s") and an apply of
	// an unchanged manifest is a no-op. It is used only while it still means
	// Duration, and plays no part in hashing.
	Raw string `json:"-" hash:"ignore"`
}

// NewNillableDuration returns a duration of d, spelled as time.Duration.String does.
func NewNillableDuration(d time.Duration) NillableDuration {
	return NillableDuration{Duration: &d}
}

// ParseNillableDuration reads "Never" or a Go duration string.
func ParseNillableDuration(s string) (NillableDuration, error) {
	var d NillableDuration
	if err := d.UnmarshalJSON([]byte(fmt.Sprintf("%q", s))); err != nil {
		return NillableDuration{}, err
	}
	return d, nil
}

// MustParseNillableDuration is ParseNillableDuration for constants; it panics on a bad value.
func MustParseNillableDuration(s string) NillableDuration {
	d, err := ParseNillableDuration(s)
	if err != nil {
		panic(err)
	}
	return d
}

// IsNever reports whether the duration is Never.
func (d NillableDuration) IsNever() bool { return d.Duration == nil }

// String returns the wire form.
func (d NillableDuration) String() string {
	if d.Duration == nil {
		return Never
	}
	if raw, err := time.ParseDuration(d.Raw); err == nil && raw == *d.Duration {
		return d.Raw
	}
	return d.Duration.String()
}

// UnmarshalJSON reads "Never" or a Go duration string.
func (d *NillableDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"720h\" or \"Never\": %w", err)
	}
	if s == Never {
		d.Duration, d.Raw = nil, ""
		return nil
	}
	parsed, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q is neither \"Never\" nor a Go duration such as \"720h\": %w", s, err)
	}
	d.Duration = &parsed
	d.Raw = s
	return nil
}

// MarshalJSON writes the text the duration was read from, or its canonical form.
func (d NillableDuration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// ToUnstructured lets runtime.DefaultUnstructuredConverter (used by
// server-side apply and unstructured clients) write the wire form.
func (d NillableDuration) ToUnstructured() interface{} {
	return d.String()
}
