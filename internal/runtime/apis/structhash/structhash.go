// Package structhash computes digests of Go values: Drift, Karpenter's
// static-drift hash of NodePool templates and EC2NodeClass specs, and Hash,
// Joist's own digest for cache keys and launch template names.
//
// Hash is a stable digest in which
//
//   - struct fields tagged `hash:"ignore"` are left out, and fields tagged
//     `hash:"string"` are hashed by their String() form;
//   - zero values, nil pointers and empty maps and slices are left out, so
//     adding a field to a type does not change the hash of objects that do
//     not set it;
//   - map order does not matter, and slices are sets (order and duplicates
//     do not matter).
//
// It is the decimal FNV-1a 64-bit hash of a canonical encoding.
package structhash

import (
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mitchellh/hashstructure/v2"
)

// Drift is the static-drift hash Karpenter stamps on NodePools,
// EC2NodeClasses and their NodeClaims: hashstructure's FormatV2 with slices
// as sets, zero values left out and nil pointers hashed as their zero
// value. It hashes Go type names, field names, kinds and field order, so the
// API types keep Karpenter's. It panics on a value hashstructure cannot
// hash (a channel or func), which no API type holds.
func Drift(v any) string {
	h, err := hashstructure.Hash(v, hashstructure.FormatV2, &hashstructure.HashOptions{
		SlicesAsSets:    true,
		IgnoreZeroValue: true,
		ZeroNil:         true,
	})
	if err != nil {
		panic(fmt.Sprintf("structhash: %v", err))
	}
	return strconv.FormatUint(h, 10)
}

// Hash returns the digest of v.
func Hash(v any) string {
	enc, _ := encode(reflect.ValueOf(v))
	h := fnv.New64a()
	_, _ = h.Write([]byte(enc))
	return strconv.FormatUint(h.Sum64(), 10)
}

var timeType = reflect.TypeOf(time.Time{})

// encode returns the canonical form of v and whether it is non-zero; zero
// values encode to "" and are dropped by their parent.
func encode(v reflect.Value) (string, bool) {
	if !v.IsValid() {
		return "", false
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return encode(v.Elem())
	case reflect.Struct:
		return encodeStruct(v)
	case reflect.Map:
		return encodeMap(v)
	case reflect.Slice, reflect.Array:
		return encodeSet(v)
	case reflect.String:
		return strconv.Quote(v.String()), v.Len() > 0
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), v.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10), v.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), v.Float() != 0
	default:
		panic(fmt.Sprintf("structhash: cannot hash a %s", v.Type()))
	}
}

func encodeStruct(v reflect.Value) (string, bool) {
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		return strconv.Quote(t.UTC().Format(time.RFC3339Nano)), !t.IsZero()
	}
	if !hasExportedFields(v.Type()) {
		// Opaque values such as resource.Quantity hash by their text.
		return stringForm(v)
	}
	var fields []string
	for i := range v.NumField() {
		field := v.Type().Field(i)
		if !field.IsExported() {
			continue
		}
		var enc string
		var ok bool
		switch field.Tag.Get("hash") {
		case "ignore":
			continue
		case "string":
			enc, ok = stringForm(v.Field(i))
		default:
			enc, ok = encode(v.Field(i))
		}
		if ok {
			fields = append(fields, fieldName(field)+":"+enc)
		}
	}
	// Sorting by name keeps the hash independent of field declaration order.
	slices.Sort(fields)
	return "{" + strings.Join(fields, ",") + "}", len(fields) > 0
}

func encodeMap(v reflect.Value) (string, bool) {
	var entries []string
	iter := v.MapRange()
	for iter.Next() {
		key, _ := encode(iter.Key())
		value, _ := encode(iter.Value())
		entries = append(entries, key+"=>"+value)
	}
	slices.Sort(entries)
	return "{" + strings.Join(entries, ",") + "}", len(entries) > 0
}

func encodeSet(v reflect.Value) (string, bool) {
	elems := make([]string, 0, v.Len())
	for i := range v.Len() {
		enc, _ := encode(v.Index(i))
		elems = append(elems, enc)
	}
	slices.Sort(elems)
	elems = slices.Compact(elems)
	return "[" + strings.Join(elems, ",") + "]", len(elems) > 0
}

// stringForm hashes a value by its String method (pointer receivers too).
func stringForm(v reflect.Value) (string, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return "", false
		}
		v = v.Elem()
	}
	ptr := reflect.New(v.Type())
	ptr.Elem().Set(v)
	stringer, ok := ptr.Interface().(fmt.Stringer)
	if !ok {
		panic(fmt.Sprintf("structhash: %s has no String method to hash by", v.Type()))
	}
	return strconv.Quote(stringer.String()), !v.IsZero()
}

func hasExportedFields(t reflect.Type) bool {
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

// fieldName is the field's JSON name, so renaming a Go field keeps hashes;
// fields hidden from JSON use their Go name.
func fieldName(field reflect.StructField) string {
	name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
	if name == "" || name == "-" {
		return field.Name
	}
	return name
}
