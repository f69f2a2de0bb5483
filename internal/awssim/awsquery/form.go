package awsquery

import (
	"net/url"
	"strconv"
	"strings"
)

// Strings returns the list prefix.member.1, prefix.member.2, … in order.
func Strings(form url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		key := prefix + ".member." + strconv.Itoa(i)
		if _, ok := form[key]; !ok {
			return out
		}
		out = append(out, form.Get(key))
	}
}

// Structs returns the list of structures prefix.member.N.Field as one map of
// field to value per member, in order.
func Structs(form url.Values, prefix string) []map[string]string {
	members := map[int]map[string]string{}
	head := prefix + ".member."
	for key := range form {
		rest, ok := strings.CutPrefix(key, head)
		if !ok {
			continue
		}
		index, field, ok := strings.Cut(rest, ".")
		n, err := strconv.Atoi(index)
		if !ok || err != nil || n < 1 {
			continue
		}
		if members[n] == nil {
			members[n] = map[string]string{}
		}
		members[n][field] = form.Get(key)
	}
	out := make([]map[string]string, 0, len(members))
	for i := 1; i <= len(members); i++ {
		m, ok := members[i]
		if !ok {
			break
		}
		out = append(out, m)
	}
	return out
}
