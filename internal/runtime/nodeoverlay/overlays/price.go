package overlays

import (
	"strconv"
	"strings"
)

// AdjustedPrice is price changed by an overlay's price or priceAdjustment:
// an unsigned number replaces the price, a signed one is added to it, a
// signed percentage scales it; the result is never below 0. The CRD's
// patterns guarantee the number parses; a change that does not leaves the
// price as it is.
func AdjustedPrice(price float64, change string) float64 {
	if change == "" {
		return price
	}
	if !strings.HasPrefix(change, "+") && !strings.HasPrefix(change, "-") {
		v, err := strconv.ParseFloat(change, 64)
		if err != nil {
			return price
		}
		return v
	}
	var out float64
	if pct, ok := strings.CutSuffix(change, "%"); ok {
		v, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return price
		}
		out = price * (1 + v/100)
	} else {
		v, err := strconv.ParseFloat(change, 64)
		if err != nil {
			return price
		}
		out = price + v
	}
	return max(out, 0)
}
