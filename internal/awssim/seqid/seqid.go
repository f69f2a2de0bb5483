// Package seqid makes deterministic identifiers for the simulated AWS
// services: the same sequence of calls yields the same request IDs, message
// IDs and resource IDs, which keeps recorded requests and test output stable.
package seqid

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
)

// Sequence yields identifiers derived from a seed and a counter. It is safe
// for concurrent use.
type Sequence struct {
	seed string
	n    atomic.Uint64
}

// New returns a Sequence whose identifiers are distinct from those of
// sequences with other seeds.
func New(seed string) *Sequence {
	return &Sequence{seed: seed}
}

// next returns the digest for the next counter value.
func (s *Sequence) next() [32]byte {
	n := s.n.Add(1)
	return sha256.Sum256(fmt.Appendf(nil, "%s/%d", s.seed, n))
}

// UUID returns the next identifier in the 8-4-4-4-12 form AWS uses for
// request IDs, SQS message IDs and EventBridge event IDs.
func (s *Sequence) UUID() string {
	d := s.next()
	h := hex.EncodeToString(d[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Hex returns the next identifier as n lowercase hex digits (n <= 64), the
// form of EKS association IDs and similar suffixes.
func (s *Sequence) Hex(n int) string {
	d := s.next()
	return hex.EncodeToString(d[:])[:n]
}

// Upper returns the next identifier as prefix followed by uppercase
// alphanumerics, length n in total: the form of IAM unique IDs (AROA…, AIPA…)
// and access key IDs (ASIA…).
func (s *Sequence) Upper(prefix string, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	d := s.next()
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; b.Len() < n; i++ {
		b.WriteByte(alphabet[d[i%len(d)]%32])
	}
	return b.String()
}
