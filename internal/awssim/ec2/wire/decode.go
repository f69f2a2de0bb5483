package wire

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
)

// node is one level of a dotted query key tree: "Filter.1.Value.2=x".
type node struct {
	value    string
	set      bool
	children map[string]*node
}

func (n *node) child(name string) *node {
	if c, ok := n.children[name]; ok {
		return c
	}
	for k, c := range n.children {
		if strings.EqualFold(k, name) {
			return c
		}
	}
	return nil
}

// Decode fills into (a pointer to an SDK input struct such as
// *ec2.DescribeInstancesInput) from the form values of a query request.
func Decode(form url.Values, into any) error {
	root := &node{}
	for key, vals := range form {
		if key == "Action" || key == "Version" || len(vals) == 0 {
			continue
		}
		n := root
		for _, part := range strings.Split(key, ".") {
			if n.children == nil {
				n.children = map[string]*node{}
			}
			c := n.children[part]
			if c == nil {
				c = &node{}
				n.children[part] = c
			}
			n = c
		}
		n.value, n.set = vals[0], true
	}
	v := reflect.ValueOf(into)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("decode into %T: need a pointer to a struct", into)
	}
	return decodeStruct(root, v.Elem(), "")
}

func decodeStruct(n *node, v reflect.Value, path string) error {
	for _, f := range fieldsOf(v.Type()) {
		c := n.child(f.query)
		if c == nil {
			continue
		}
		if err := decodeValue(c, v.Field(f.index), join(path, f.query)); err != nil {
			return err
		}
	}
	return nil
}

func decodeValue(n *node, v reflect.Value, path string) error {
	if v.Kind() == reflect.Pointer {
		p := reflect.New(v.Type().Elem())
		if err := decodeValue(n, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	bad := func(err error) error {
		return &InvalidParameterError{Key: path, Value: n.value, Err: err}
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.value)
		if err != nil {
			return bad(err)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.value, 10, v.Type().Bits())
		if err != nil {
			return bad(err)
		}
		v.SetInt(i)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(n.value, 64)
		if err != nil {
			return bad(err)
		}
		v.SetFloat(f)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b, err := base64.StdEncoding.DecodeString(n.value)
			if err != nil {
				return bad(err)
			}
			v.SetBytes(b)
			return nil
		}
		items := indexed(n)
		s := reflect.MakeSlice(v.Type(), len(items), len(items))
		for i, item := range items {
			if err := decodeValue(item, s.Index(i), fmt.Sprintf("%s.%d", path, i+1)); err != nil {
				return err
			}
		}
		v.Set(s)
	case reflect.Struct:
		if v.Type() == timeType {
			t, err := time.Parse(time.RFC3339, n.value)
			if err != nil {
				return bad(err)
			}
			v.Set(reflect.ValueOf(t))
			return nil
		}
		return decodeStruct(n, v, path)
	}
	return nil
}

// indexed returns the members of a list node in index order. EC2 lists are
// "Key.N" or, for a few shapes, "Key.Member.N"/"Key.Item.N".
func indexed(n *node) []*node {
	numbered := func(m map[string]*node) ([]*node, bool) {
		type kv struct {
			i int
			n *node
		}
		var out []kv
		for k, c := range m {
			i, err := strconv.Atoi(k)
			if err != nil {
				return nil, false
			}
			out = append(out, kv{i, c})
		}
		sort.Slice(out, func(a, b int) bool { return out[a].i < out[b].i })
		nodes := make([]*node, len(out))
		for i := range out {
			nodes[i] = out[i].n
		}
		return nodes, true
	}
	if items, ok := numbered(n.children); ok {
		return items
	}
	if len(n.children) == 1 {
		for _, c := range n.children {
			if items, ok := numbered(c.children); ok {
				return items
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// InvalidParameterError reports a request value that does not parse as the
// type its field needs.
type InvalidParameterError struct {
	Key, Value string
	Err        error
}

func (e *InvalidParameterError) Error() string {
	return fmt.Sprintf("invalid value %q for parameter %s: %v", e.Value, e.Key, e.Err)
}
