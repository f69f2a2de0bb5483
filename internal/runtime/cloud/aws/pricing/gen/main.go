// Command gen writes the static price tables the pricing provider embeds:
// on-demand prices as gzipped lines of "region<TAB>instance-type<TAB>USD-per-hour",
// sorted, from a {"region": {"type": price}} JSON document, and EBS volume
// prices as a copy of the {"region": {"volume type": {...}}} JSON document.
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
	in := flag.String("in", "../../../../awssim/catalog/data/prices_on_demand.json", "price JSON {region: {type: price}}; empty skips it")
	out := flag.String("out", "static_prices.tsv.gz", "output file")
	ebsIn := flag.String("ebs-in", "", "EBS price JSON {region: {volume type: prices}}; empty skips it")
	ebsOut := flag.String("ebs-out", "static_ebs_prices.json", "EBS output file")
	flag.Parse()
	if *ebsIn != "" {
		if err := copyEBS(*ebsIn, *ebsOut); err != nil {
			log.Fatal(err)
		}
	}
	if *in == "" {
		return
	}
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

// copyEBS checks that in parses as volume prices and writes it to out.
func copyEBS(in, out string) error {
	raw, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	var prices map[string]map[string]map[string]float64
	if err := json.Unmarshal(raw, &prices); err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	return os.WriteFile(out, raw, 0o644)
}
