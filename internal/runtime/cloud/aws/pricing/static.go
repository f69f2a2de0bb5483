package pricing

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strconv"
	"strings"
)

//go:embed static_prices.tsv.gz
var staticPrices []byte

// StaticOnDemand returns the embedded on-demand prices of a region, empty
// for a region the table does not cover.
func StaticOnDemand(region string) map[string]float64 {
	out := map[string]float64{}
	zr, err := gzip.NewReader(bytes.NewReader(staticPrices))
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(zr)
	prefix := region + "\t"
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		name, price, _ := strings.Cut(line, "\t")
		if p, err := strconv.ParseFloat(price, 64); err == nil {
			out[name] = p
		}
	}
	return out
}
