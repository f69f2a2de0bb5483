package scheduling

import "math/bits"

// bitset is a fixed-width set of instance-type indices.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) set(i int)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }

func (b bitset) and(o bitset) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = b[i] & o[i]
	}
	return out
}

func (b bitset) andInPlace(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}

func (b bitset) orInPlace(o bitset) {
	for i := range b {
		b[i] |= o[i]
	}
}

func (b bitset) not(n int) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = ^b[i]
	}
	if r := uint(n) & 63; r != 0 {
		out[len(out)-1] &= (1 << r) - 1
	}
	return out
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

func (b bitset) count() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// each calls f for every member in increasing order.
func (b bitset) each(f func(i int)) {
	for wi, w := range b {
		for w != 0 {
			t := bits.TrailingZeros64(w)
			f(wi*64 + t)
			w &= w - 1
		}
	}
}

func (b bitset) clone() bitset { return append(bitset(nil), b...) }
