package wire

import (
	"reflect"
	"strings"
	"sync"
)

// field is one exported, serialisable struct field with its wire names.
type field struct {
	index int
	xml   string
	query string
	item  string // element name of list members
}

var fieldCache sync.Map // reflect.Type -> []field

// fieldsOf returns the wire fields of struct type t, cached.
func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Name == "ResultMetadata" {
			continue
		}
		key := t.Name() + "." + sf.Name
		f := field{index: i, xml: xmlNames[key], query: queryNames[key], item: listMembers[key]}
		if f.item == "" {
			f.item = "item"
		}
		if f.xml == "" {
			f.xml = strings.ToLower(sf.Name[:1]) + sf.Name[1:]
		}
		if f.query == "" {
			f.query = sf.Name
		}
		fs = append(fs, f)
	}
	fieldCache.Store(t, fs)
	return fs
}
