package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// check is what an example directory can be checked with offline.
type check string

const (
	// checkValidate runs `terraform validate` with the local provider.
	checkValidate check = "validate"
	// checkParse parses the HCL and checks joist resources against the
	// provider schema; other providers and modules cannot be downloaded.
	checkParse check = "parse"
)

const joistSource = "joistdev/joist"

// config is what an example directory's Terraform files declare.
type config struct {
	dir   string
	files map[string]*hcl.File
	// providers maps each provider local name the configuration uses,
	// declared or implied by a resource type, to its source address.
	providers map[string]string
	// declaresJoist is whether required_providers names joistdev/joist.
	declaresJoist bool
	// modules are the sources of the module blocks.
	modules []string
	// undeclared lists references to objects the directory does not
	// declare: the directory is a snippet of a larger configuration (as
	// registry-doc examples are), which terraform validate would refuse.
	undeclared []string
}

var topLevel = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "terraform"},
	{Type: "provider", LabelNames: []string{"name"}},
	{Type: "resource", LabelNames: []string{"type", "name"}},
	{Type: "data", LabelNames: []string{"type", "name"}},
	{Type: "ephemeral", LabelNames: []string{"type", "name"}},
	{Type: "module", LabelNames: []string{"name"}},
	{Type: "import"},
	{Type: "moved"},
	{Type: "removed"},
}}

var terraformBlock = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "required_providers"}}}

// loadConfig parses every .tf file of dir (not its subdirectories: a
// Terraform module is one directory).
func loadConfig(dir string) (*config, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s has no .tf files", dir)
	}
	c := &config{dir: dir, files: map[string]*hcl.File{}, providers: map[string]string{}}
	parser := hclparse.NewParser()
	implied := map[string]bool{}
	for _, p := range paths {
		f, diags := parser.ParseHCLFile(p)
		if diags.HasErrors() {
			return nil, fmt.Errorf("parsing %s: %s", p, diags.Error())
		}
		c.files[p] = f
		content, _, diags := f.Body.PartialContent(topLevel)
		if diags.HasErrors() {
			return nil, fmt.Errorf("reading %s: %s", p, diags.Error())
		}
		for _, b := range content.Blocks {
			switch b.Type {
			case "terraform":
				if err := c.readRequiredProviders(p, b); err != nil {
					return nil, err
				}
			case "provider":
				implied[b.Labels[0]] = true
			case "resource", "data", "ephemeral":
				implied[strings.SplitN(b.Labels[0], "_", 2)[0]] = true
			case "module":
				attrs, _ := b.Body.JustAttributes()
				src := "(no source)"
				if a, ok := attrs["source"]; ok {
					if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String {
						src = v.AsString()
					}
				}
				c.modules = append(c.modules, src)
			}
		}
	}
	declared, refs := declarations(c.files)
	for _, ref := range refs {
		if !declared[ref] {
			c.undeclared = append(c.undeclared, ref)
		}
		if kind, _, _ := strings.Cut(ref, "."); strings.Contains(kind, "_") {
			implied[strings.SplitN(kind, "_", 2)[0]] = true
		} else if kind == "data" {
			implied[strings.SplitN(strings.Split(ref, ".")[1], "_", 2)[0]] = true
		}
	}
	sort.Strings(c.undeclared)
	for name := range implied {
		if _, ok := c.providers[name]; !ok {
			// Terraform's default for an undeclared local name.
			c.providers[name] = "hashicorp/" + name
		}
	}
	// Examples without required_providers use the joist provider under its
	// local name; validate declares it for them.
	if !c.declaresJoist && c.providers["joist"] == "hashicorp/joist" {
		c.providers["joist"] = joistSource
	}
	return c, nil
}

func (c *config) readRequiredProviders(path string, tf *hcl.Block) error {
	content, _, diags := tf.Body.PartialContent(terraformBlock)
	if diags.HasErrors() {
		return fmt.Errorf("reading the terraform block of %s: %s", path, diags.Error())
	}
	for _, rp := range content.Blocks {
		attrs, diags := rp.Body.JustAttributes()
		if diags.HasErrors() {
			return fmt.Errorf("reading required_providers in %s: %s", path, diags.Error())
		}
		for name, a := range attrs {
			v, diags := a.Expr.Value(nil)
			if diags.HasErrors() {
				return fmt.Errorf("required_providers.%s in %s: %s", name, path, diags.Error())
			}
			source := "hashicorp/" + name
			if v.Type().IsObjectType() && v.Type().HasAttribute("source") {
				source = normalizeSource(v.GetAttr("source").AsString())
			}
			c.providers[name] = source
			if source == joistSource {
				c.declaresJoist = true
			}
		}
	}
	return nil
}

// normalizeSource lowercases a provider source address (they compare
// case-insensitively). A hostname is kept: a source on another host is
// another provider, which the dev_overrides entry does not cover.
func normalizeSource(s string) string { return strings.ToLower(s) }

// check decides how the directory can be checked, and says why.
func (c *config) check() (check, string) {
	var others []string
	for name, src := range c.providers {
		if src != joistSource {
			others = append(others, name+"="+src)
		}
	}
	sort.Strings(others)
	var why []string
	if len(others) > 0 {
		why = append(why, "providers "+strings.Join(others, ", "))
	}
	if len(c.modules) > 0 {
		why = append(why, "modules "+strings.Join(c.modules, ", "))
	}
	if len(c.undeclared) > 0 {
		why = append(why, "the configuration around it (references "+strings.Join(c.undeclared, ", ")+")")
	}
	if len(why) > 0 {
		return checkParse, "needs " + strings.Join(why, " and ")
	}
	return checkValidate, "needs only " + joistSource
}

// exampleDirs lists every directory under root that holds .tf files.
func exampleDirs(root string) ([]string, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			seen[filepath.Dir(p)] = true
		}
		return nil
	})
	dirs := make([]string, 0, len(seen))
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs, err
}

// Names a reference may start with that are not resources.
var nonResourceRoots = map[string]bool{"path": true, "terraform": true, "count": true, "each": true, "self": true}

// declarations returns what the files declare (var.x, local.x, module.x,
// data.t.n, t.n) and every reference their expressions make, in the same
// spelling. moved, removed and import blocks name resources on purpose that
// may be absent, and are not counted as references.
func declarations(files map[string]*hcl.File) (declared map[string]bool, refs []string) {
	declared = map[string]bool{}
	seen := map[string]bool{}
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for _, a := range b.Attributes {
			for _, tr := range a.Expr.Variables() {
				if r := refName(tr); r != "" && !seen[r] {
					seen[r] = true
					refs = append(refs, r)
				}
			}
		}
		for _, blk := range b.Blocks {
			walk(blk.Body)
		}
	}
	for _, f := range files {
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			switch b.Type {
			case "variable":
				declared["var."+b.Labels[0]] = true
			case "module":
				declared["module."+b.Labels[0]] = true
			case "resource":
				declared[b.Labels[0]+"."+b.Labels[1]] = true
			case "data":
				declared["data."+b.Labels[0]+"."+b.Labels[1]] = true
			case "locals":
				for name := range b.Body.Attributes {
					declared["local."+name] = true
				}
			}
			if b.Type != "moved" && b.Type != "removed" && b.Type != "import" {
				walk(b.Body)
			}
		}
	}
	sort.Strings(refs)
	return declared, refs
}

// refName spells the object a traversal starts from: var.x, local.x,
// module.x, data.t.n or t.n; "" for names that are not declarations.
func refName(tr hcl.Traversal) string {
	var parts []string
steps:
	for _, step := range tr {
		switch st := step.(type) {
		case hcl.TraverseRoot:
			parts = append(parts, st.Name)
		case hcl.TraverseAttr:
			parts = append(parts, st.Name)
		default:
			// An index ends the name (aws_subnet.a[0].id).
			break steps
		}
		if len(parts) == 3 {
			break
		}
	}
	if len(parts) < 2 || nonResourceRoots[parts[0]] {
		return ""
	}
	switch {
	case parts[0] == "var", parts[0] == "local", parts[0] == "module":
		return parts[0] + "." + parts[1]
	case parts[0] == "data":
		if len(parts) == 3 {
			return strings.Join(parts, ".")
		}
		return ""
	case strings.Contains(parts[0], "_"):
		return parts[0] + "." + parts[1]
	}
	return ""
}
