package iam

import (
	"net/url"

	"github.com/joistdev/terraform-provider-joist/internal/awssim/awsquery"
)

// tagSet is an entity's tags in the order first set.
type tagSet []tagXML

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// maxTags is IAM's limit of tags per entity.
const maxTags = 50

// tagsParam reads the Tags.member.N.Key/Value list of a request.
func tagsParam(form url.Values) tagSet {
	var tags tagSet
	for _, m := range awsquery.Structs(form, "Tags") {
		tags = tags.with(m["Key"], m["Value"])
	}
	return tags
}

// with returns the set with key set to value.
func (t tagSet) with(key, value string) tagSet {
	for i := range t {
		if t[i].Key == key {
			out := append(tagSet{}, t...)
			out[i].Value = value
			return out
		}
	}
	return append(append(tagSet{}, t...), tagXML{Key: key, Value: value})
}

// merge applies tags on top of t, failing when the result has too many.
func (t tagSet) merge(tags tagSet) (tagSet, *awsquery.Error) {
	out := t
	for _, tag := range tags {
		out = out.with(tag.Key, tag.Value)
	}
	if len(out) > maxTags {
		return t, errLimitExceeded("The number of tags has reached the maximum limit.")
	}
	return out, nil
}

// without returns the set minus the keys.
func (t tagSet) without(keys []string) tagSet {
	drop := map[string]bool{}
	for _, k := range keys {
		drop[k] = true
	}
	var out tagSet
	for _, tag := range t {
		if !drop[tag.Key] {
			out = append(out, tag)
		}
	}
	return out
}
