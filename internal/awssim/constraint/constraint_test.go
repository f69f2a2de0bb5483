package constraint_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	c "github.com/joistdev/terraform-provider-joist/internal/awssim/constraint"
)

var rules = []c.Rule{
	c.String("Name", 1, 8).Req(),
	c.Integer("MaxResults", 5, 100),
	c.List("Ids", 1, 2),
	c.Enum("State", "ENABLED", "DISABLED"),
}

func TestCheckFindsTheFirstBrokenRule(t *testing.T) {
	cases := []struct {
		name, body string
		kind       string // "" when valid
		member     string
	}{
		{"valid", `{"Name":"a","MaxResults":5,"Ids":["x","y"],"State":"ENABLED"}`, "", ""},
		{"missing", `{"MaxResults":5}`, "required", "Name"},
		{"null is absent", `{"Name":null}`, "required", "Name"},
		{"too long", `{"Name":"123456789"}`, "max", "Name"},
		{"characters, not bytes", `{"Name":"ééééééé"}`, "", ""},
		{"below", `{"Name":"a","MaxResults":4}`, "min", "MaxResults"},
		{"above", `{"Name":"a","MaxResults":101}`, "max", "MaxResults"},
		{"not an integer", `{"Name":"a","MaxResults":"five"}`, "type", "MaxResults"},
		{"empty list", `{"Name":"a","Ids":[]}`, "min", "Ids"},
		{"long list", `{"Name":"a","Ids":["a","b","c"]}`, "max", "Ids"},
		{"enum", `{"Name":"a","State":"on"}`, "enum", "State"},
	}
	for _, tc := range cases {
		var doc c.JSON
		if err := json.Unmarshal([]byte(tc.body), &doc); err != nil {
			t.Fatal(err)
		}
		v := c.Check(rules, doc)
		switch {
		case tc.kind == "" && v != nil:
			t.Errorf("%s: %s", tc.name, v.Standard())
		case tc.kind != "" && (v == nil || v.Kind != tc.kind || v.Member != tc.member):
			t.Errorf("%s: got %+v, want %s of %s", tc.name, v, tc.kind, tc.member)
		}
	}
}

func TestQueryFormCountsListMembersAndEmptyLists(t *testing.T) {
	form := c.QueryForm(url.Values{"Name": {"n"}, "Ids.member.1": {"a"}, "Ids.member.2": {"b"}, "Ids.member.3": {"c"}})
	if v := c.Check(rules, form); v == nil || v.Member != "Ids" || v.Kind != "max" {
		t.Errorf("three list members: %+v", v)
	}
	// The query protocols send an empty list as the bare member name.
	form = c.QueryForm(url.Values{"Name": {"n"}, "Ids": {""}})
	if v := c.Check(rules, form); v == nil || v.Kind != "min" {
		t.Errorf("empty list: %+v", v)
	}
	tags := c.QueryForm(url.Values{"Tags.member.1.Key": {"a"}, "Tags.member.1.Value": {"b"}, "Tags.member.2.Key": {"c"}})
	if v, ok := tags.Lookup("Tags", "list"); !ok || v.Count != 2 {
		t.Errorf("tags = %+v %v, want 2 structures", v, ok)
	}
}

func TestFieldsReadsSDKInputStructs(t *testing.T) {
	type state string
	max := int32(1000)
	in := struct {
		Name       *string
		MaxResults *int32
		Ids        []string
		State      state
	}{MaxResults: &max, Ids: []string{"a"}}
	v := c.Check(rules, c.Fields(&in))
	if v == nil || v.Kind != "required" || v.Member != "Name" {
		t.Fatalf("nil pointer: %+v", v)
	}
	name := "n"
	in.Name = &name
	if v := c.Check(rules, c.Fields(&in)); v == nil || v.Member != "MaxResults" || !strings.Contains(v.Standard(), "less than or equal to 100") {
		t.Fatalf("MaxResults 1000: %+v", v)
	}
	in.MaxResults = nil
	in.State = "on"
	if v := c.Check(rules, c.Fields(&in)); v == nil || v.Member != "State" {
		t.Fatalf("enum: %+v", v)
	}
}
