package examples

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// providerSchema is the part of `terraform providers schema -json` the
// attribute check reads.
type providerSchema struct {
	Provider    schemaEntry            `json:"provider"`
	Resources   map[string]schemaEntry `json:"resource_schemas"`
	DataSources map[string]schemaEntry `json:"data_source_schemas"`
}

type schemaEntry struct {
	Block schemaBlock `json:"block"`
}

type schemaBlock struct {
	Attributes map[string]*schemaAttribute `json:"attributes"`
	BlockTypes map[string]json.RawMessage  `json:"block_types"`
}

type schemaAttribute struct {
	Required   bool          `json:"required"`
	Computed   bool          `json:"computed"`
	Optional   bool          `json:"optional"`
	NestedType *nestedObject `json:"nested_type"`
}

type nestedObject struct {
	Attributes  map[string]*schemaAttribute `json:"attributes"`
	NestingMode string                      `json:"nesting_mode"`
}

// parseProviderSchema picks the joist provider out of the CLI's JSON.
func parseProviderSchema(out []byte) (*providerSchema, error) {
	var doc struct {
		Schemas map[string]*providerSchema `json:"provider_schemas"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("reading the provider schema JSON: %w", err)
	}
	for addr, s := range doc.Schemas {
		// The CLI spells the address with the default registry's hostname.
		if strings.HasSuffix(normalizeSource(addr), "/"+joistSource) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("the provider schema JSON has no %s", joistSource)
}

// metaArguments are Terraform's own arguments of resource and provider
// blocks.
var (
	metaArguments         = map[string]bool{"count": true, "for_each": true, "depends_on": true, "provider": true}
	providerMetaArguments = map[string]bool{"alias": true, "version": true}
)

// checkJoistBlocks checks the joist provider blocks and every joist
// resource and data block of c against
// the schema: each attribute written exists and is not read-only, and each
// required attribute is written, through nested object literals too.
func checkJoistBlocks(c *config, s *providerSchema) []string {
	var problems []string
	files := make([]string, 0, len(c.files))
	for p := range c.files {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, p := range files {
		body, ok := c.files[p].Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			if b.Type == "provider" && b.Labels[0] == "joist" {
				where := fmt.Sprintf("%s: provider %q", b.TypeRange.String(), "joist")
				problems = append(problems, checkBody(where, b.Body, s.Provider.Block, providerMetaArguments)...)
				continue
			}
			if (b.Type != "resource" && b.Type != "data") || len(b.Labels) == 0 || !strings.HasPrefix(b.Labels[0], "joist_") {
				continue
			}
			entries := s.Resources
			if b.Type == "data" {
				entries = s.DataSources
			}
			where := fmt.Sprintf("%s: %s.%s", b.TypeRange.String(), b.Labels[0], b.Labels[1])
			if b.Type == "data" {
				where = fmt.Sprintf("%s: data.%s.%s", b.TypeRange.String(), b.Labels[0], b.Labels[1])
			}
			entry, ok := entries[b.Labels[0]]
			if !ok {
				problems = append(problems, where+": the provider has no such "+b.Type+" type")
				continue
			}
			problems = append(problems, checkBody(where, b.Body, entry.Block, metaArguments)...)
		}
	}
	return problems
}

func checkBody(where string, body *hclsyntax.Body, schema schemaBlock, meta map[string]bool) []string {
	var problems []string
	written := map[string]hcl.Expression{}
	for name, a := range body.Attributes {
		if meta[name] {
			continue
		}
		written[name] = a.Expr
	}
	for _, blk := range body.Blocks {
		if blk.Type == "lifecycle" || blk.Type == "timeouts" {
			continue
		}
		if _, ok := schema.BlockTypes[blk.Type]; !ok {
			problems = append(problems, fmt.Sprintf("%s: %s is not a block of the schema", where, blk.Type))
		}
	}
	return append(problems, checkAttributes(where, written, schema.Attributes)...)
}

// checkAttributes compares the attributes written (name -> expression) with
// the schema's; nested object literals are checked recursively.
func checkAttributes(where string, written map[string]hcl.Expression, attrs map[string]*schemaAttribute) []string {
	var problems []string
	names := make([]string, 0, len(written))
	for n := range written {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a, ok := attrs[name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: unknown attribute %q (the schema has %s)", where, name, strings.Join(sortedKeys(attrs), ", ")))
			continue
		}
		if a.Computed && !a.Optional && !a.Required {
			problems = append(problems, fmt.Sprintf("%s: attribute %q is read-only", where, name))
			continue
		}
		if a.NestedType != nil {
			problems = append(problems, checkNested(where+"."+name, written[name], a.NestedType)...)
		}
	}
	for _, name := range sortedKeys(attrs) {
		if _, ok := written[name]; attrs[name].Required && !ok {
			problems = append(problems, fmt.Sprintf("%s: required attribute %q is missing", where, name))
		}
	}
	return problems
}

// checkNested walks object and tuple literals of a nested attribute; other
// expressions (variables, function calls) are left to Terraform.
func checkNested(where string, expr hcl.Expression, n *nestedObject) []string {
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		if n.NestingMode == "single" {
			return checkObject(where, e, n)
		}
		if n.NestingMode == "map" {
			var problems []string
			for _, item := range e.Items {
				key, _ := objectKey(item.KeyExpr)
				problems = append(problems, checkNested(fmt.Sprintf("%s[%q]", where, key), item.ValueExpr, &nestedObject{Attributes: n.Attributes, NestingMode: "single"})...)
			}
			return problems
		}
	case *hclsyntax.TupleConsExpr:
		if n.NestingMode == "list" || n.NestingMode == "set" {
			var problems []string
			for i, item := range e.Exprs {
				if o, ok := item.(*hclsyntax.ObjectConsExpr); ok {
					problems = append(problems, checkObject(fmt.Sprintf("%s[%d]", where, i), o, n)...)
				}
			}
			return problems
		}
	}
	return nil
}

func checkObject(where string, o *hclsyntax.ObjectConsExpr, n *nestedObject) []string {
	written := map[string]hcl.Expression{}
	for _, item := range o.Items {
		key, ok := objectKey(item.KeyExpr)
		if !ok {
			// A computed key: Terraform checks it.
			continue
		}
		written[key] = item.ValueExpr
	}
	return checkAttributes(where, written, n.Attributes)
}

func objectKey(expr hcl.Expression) (string, bool) {
	if k, ok := expr.(*hclsyntax.ObjectConsKeyExpr); ok {
		if kw := hcl.ExprAsKeyword(k.Wrapped); kw != "" {
			return kw, true
		}
		expr = k.Wrapped
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || !v.Type().Equals(cty.String) || v.IsNull() {
		return "", false
	}
	return v.AsString(), true
}

func sortedKeys(m map[string]*schemaAttribute) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
