// Command gen writes the static on-demand price table the pricing provider
// embeds: gzipped lines of "region<TAB>instance-type<TAB>USD-per-hour",
// sorted, from a {"region": {"type": price}} JSON document.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"slices"
	"strconv"
)

func main() {
	in := flag.String("in", "../../../../awssim/catalog/data/prices_on_demand.json", "price JSON {region: {type: price}}")
	out := flag.String("out", "static_prices.tsv.gz", "output file")
	flag.Parse()
	raw, err := os.ReadFile(*in)
	if err != nil {
		log.Fatal(err)
	}
	var prices map[string]map[string]float64
	if err := json.Unmarshal(raw, &prices); err != nil {
		log.Fatalf("%s: %v", *in, err)
	}
	var lines []string
	for region, types := range prices {
		for t, p := range types {
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s\n", region, t, strconv.FormatFloat(p, 'f', -1, 64)))
		}
	}
	slices.Sort(lines)
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	for _, l := range lines {
		_, _ = zw.Write([]byte(l))
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
