// Package selector turns EC2NodeClass selector terms into EC2 Describe
// filters: terms are ORed (one call each), fields within a term ANDed, and
// a tag value of "*" matches any value of that key.
package selector

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// TagFilters returns one filter per tag, sorted by key so equal terms give
// equal requests.
func TagFilters(tags map[string]string) []ec2types.Filter {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2types.Filter, 0, len(keys))
	for _, k := range keys {
		if v := tags[k]; v == "*" {
			out = append(out, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
		} else {
			out = append(out, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
		}
	}
	return out
}

// Filter is a single-valued EC2 filter.
func Filter(name, value string) ec2types.Filter {
	return ec2types.Filter{Name: aws.String(name), Values: []string{value}}
}

// TagMap turns EC2 tags into a map.
func TagMap(tags []ec2types.Tag) map[string]string {
	out := make(map[string]string, len(tags))
	for _, t := range tags {
		out[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return out
}

// Tags turns a map into EC2 tags sorted by key, so equal maps give equal
// requests.
func Tags(m map[string]string) []ec2types.Tag {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2types.Tag, 0, len(keys))
	for _, k := range keys {
		out = append(out, ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// Term is one selector term's filters, with the term's path for errors
// (spec.subnetSelectorTerms[2]) and the fields it may set.
type Term struct {
	Path    string
	Fields  string
	Filters []ec2types.Filter
}

// Union lists what each term selects, one listing a term (terms are ORed),
// and returns the union keyed by ID. list pages through one Describe call
// and hands each resource found to add.
func Union[T any](ctx context.Context, what string, terms []Term, list func(ctx context.Context, filters []ec2types.Filter, add func(id string, v T)) error) (map[string]T, error) {
	seen := map[string]T{}
	for _, t := range terms {
		if len(t.Filters) == 0 {
			return nil, fmt.Errorf("%s is empty: set %s", t.Path, t.Fields)
		}
		if err := list(ctx, t.Filters, func(id string, v T) { seen[id] = v }); err != nil {
			return nil, fmt.Errorf("describing %s for %s: %w", what, t.Path, err)
		}
	}
	return seen, nil
}
