package iam

import (
	"strconv"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// page is one page of a List* result: IAM pages with MaxItems (default 100)
// and an opaque Marker from the previous page's response.
type page struct {
	IsTruncated bool   `xml:"IsTruncated"`
	Marker      string `xml:"Marker,omitempty"`
}

// paginate returns the page of items the request's Marker and MaxItems
// select. The marker is the index of the first item of the next page.
func paginate[T any](c *awsquery.Call, items []T) ([]T, page, *awsquery.Error) {
	max := intParam(c, "MaxItems", 100)
	start := 0
	if m := c.Form.Get("Marker"); m != "" {
		n, convErr := strconv.Atoi(m)
		if convErr != nil || n < 0 || n > len(items) {
			return nil, page{}, errInvalidInput("Invalid Marker: %s", m)
		}
		start = n
	}
	end := min(start+max, len(items))
	p := page{}
	if end < len(items) {
		p = page{IsTruncated: true, Marker: strconv.Itoa(end)}
	}
	return items[start:end], p, nil
}
