// Package pricing is the simulated AWS Price List Query API: GetProducts
// (awsJson1_1, X-Amz-Target AWSPriceListService.GetProducts) over Linux
// on-demand EC2 instance and EBS volume products built from the catalog, in
// the price-list document
// shape the real API returns (each PriceList entry a JSON document string).
package pricing

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsjson"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/catalog"
	"github.com/joistdev/terraform-provider-joist/internal/awssim/seqid"
)

const contentType = "application/x-amz-json-1.1"

// Service serves the price list. It is an http.Handler for requests already
// routed to the Pricing API; its data never changes, so it needs no lock.
type Service struct {
	dispatcher awsjson.Dispatcher
	products   []product
}

// New builds the price list from the embedded catalog.
func New() (*Service, error) {
	cat, err := catalog.Load()
	if err != nil {
		return nil, err
	}
	s := &Service{products: products(cat)}
	s.dispatcher = awsjson.Dispatcher{
		Prefix:      "AWSPriceListService",
		ContentType: contentType,
		RequestIDs:  seqid.New("pricing-request"),
		Ops: map[string]awsjson.Op{
			"GetProducts":      s.getProducts,
			"DescribeServices": s.describeServices,
		},
		Rules: constraints,
	}
	return s, nil
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.dispatcher.ServeHTTP(w, r) }

type filter struct {
	Type  string `json:"Type"`
	Field string `json:"Field"`
	Value string `json:"Value"`
}

type getProductsInput struct {
	ServiceCode   string   `json:"ServiceCode"`
	Filters       []filter `json:"Filters"`
	FormatVersion string   `json:"FormatVersion"`
	MaxResults    int      `json:"MaxResults"`
	NextToken     string   `json:"NextToken"`
}

func (s *Service) getProducts(c *awsjson.Call) (any, *awsjson.Error) {
	var in getProductsInput
	if err := c.Decode(&in); err != nil {
		return nil, err
	}
	if in.ServiceCode != "AmazonEC2" {
		return nil, invalid("ServiceCode", fmt.Sprintf("the price list holds AmazonEC2 only, not %q", in.ServiceCode))
	}
	if in.FormatVersion != "" && in.FormatVersion != "aws_v1" {
		return nil, invalid("FormatVersion", "use aws_v1")
	}
	var matched []*product
	for i := range s.products {
		ok, err := s.products[i].matches(in.Filters)
		if err != nil {
			return nil, err
		}
		if ok {
			matched = append(matched, &s.products[i])
		}
	}
	size := in.MaxResults
	if size <= 0 {
		size = 100
	}
	start := 0
	if in.NextToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(in.NextToken)
		if err == nil {
			start, err = strconv.Atoi(string(b))
		}
		if err != nil || start < 0 || start > len(matched) {
			return nil, &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidNextTokenException", Message: "The next token is invalid.", Sender: true}
		}
	}
	end := min(start+size, len(matched))
	out := map[string]any{"FormatVersion": "aws_v1", "PriceList": []string{}}
	list := make([]string, 0, end-start)
	for _, p := range matched[start:end] {
		list = append(list, p.document)
	}
	out["PriceList"] = list
	if end < len(matched) {
		out["NextToken"] = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(end)))
	}
	return out, nil
}

func (s *Service) describeServices(c *awsjson.Call) (any, *awsjson.Error) {
	names := map[string]bool{}
	for _, p := range s.products {
		for k := range p.attributes {
			names[k] = true
		}
	}
	attrs := make([]string, 0, len(names))
	for k := range names {
		attrs = append(attrs, k)
	}
	sort.Strings(attrs)
	return map[string]any{"FormatVersion": "aws_v1", "Services": []map[string]any{{"ServiceCode": "AmazonEC2", "AttributeNames": attrs}}}, nil
}

func invalid(field, msg string) *awsjson.Error {
	return &awsjson.Error{Status: http.StatusBadRequest, Type: "InvalidParameterException", Message: field + ": " + msg, Sender: true}
}

// matches applies GetProducts filters: the field names an attribute in any
// case; TERM_MATCH and EQUALS compare the value exactly, CONTAINS a
// substring, ANY_OF and NONE_OF a comma-separated list.
func (p *product) matches(filters []filter) (bool, *awsjson.Error) {
	for _, f := range filters {
		have, ok := p.byField[strings.ToLower(f.Field)]
		if !ok {
			return false, nil
		}
		switch f.Type {
		case "TERM_MATCH", "EQUALS":
			if have != f.Value {
				return false, nil
			}
		case "CONTAINS":
			if !strings.Contains(have, f.Value) {
				return false, nil
			}
		case "ANY_OF", "NONE_OF":
			in := false
			for _, v := range strings.Split(f.Value, ",") {
				in = in || strings.TrimSpace(v) == have
			}
			if in != (f.Type == "ANY_OF") {
				return false, nil
			}
		default:
			return false, invalid("Filters.Type", fmt.Sprintf("%q is not one of TERM_MATCH, EQUALS, CONTAINS, ANY_OF, NONE_OF", f.Type))
		}
	}
	return true, nil
}
