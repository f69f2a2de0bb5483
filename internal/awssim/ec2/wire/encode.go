package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"reflect"
	"strconv"
	"time"
)

const namespace = "http://ec2.amazonaws.com/doc/2016-11-15/"

var timeType = reflect.TypeOf(time.Time{})

// Encode renders out (an SDK output struct such as ec2.DescribeInstancesOutput)
// as the <OperationResponse> document EC2 returns.
func Encode(operation, requestID string, out any) []byte {
	var b bytes.Buffer
	b.Grow(1024)
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n<")
	b.WriteString(operation)
	b.WriteString(`Response xmlns="` + namespace + `"><requestId>`)
	b.WriteString(requestID)
	b.WriteString(`</requestId>`)
	v := reflect.ValueOf(out)
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	encodeFields(&b, v)
	b.WriteString("</")
	b.WriteString(operation)
	b.WriteString("Response>")
	return b.Bytes()
}

func encodeFields(b *bytes.Buffer, v reflect.Value) {
	for _, f := range fieldsOf(v.Type()) {
		encodeValue(b, f.xml, f.item, v.Field(f.index))
	}
}

// encodeValue writes <name>value</name>, list members as <item>value</item>; absent values (nil pointers, empty
// enums, nil slices) are left out as EC2 leaves them out.
func encodeValue(b *bytes.Buffer, name, item string, v reflect.Value) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.String:
		if v.Len() == 0 && v.Type().Name() != "string" {
			return // unset enum
		}
		open(b, name)
		_ = xml.EscapeText(b, []byte(v.String()))
	case reflect.Bool:
		open(b, name)
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		open(b, name)
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Float32, reflect.Float64:
		open(b, name)
		b.WriteString(strconv.FormatFloat(v.Float(), 'f', -1, 64))
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		open(b, name)
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b.WriteString(base64.StdEncoding.EncodeToString(v.Bytes()))
			break
		}
		for i := 0; i < v.Len(); i++ {
			encodeValue(b, item, "item", v.Index(i))
		}
	case reflect.Struct:
		open(b, name)
		if v.Type() == timeType {
			b.WriteString(v.Interface().(time.Time).UTC().Format("2006-01-02T15:04:05.000Z"))
			break
		}
		encodeFields(b, v)
	default:
		return // maps and other kinds do not occur in the EC2 shapes served
	}
	b.WriteString("</")
	b.WriteString(name)
	b.WriteByte('>')
}

func open(b *bytes.Buffer, name string) {
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteByte('>')
}
