package examples

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pinned are the checks the composition examples must get; the rest follow
// from their configuration.
var pinned = map[string]check{
	"examples/quickstart":                  checkValidate,
	"examples/eks-module":                  checkParse,
	"examples/migrate-from-karpenter-helm": checkParse,
}

// repoRoot is the module root: tests run in their package directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from the test directory: %v", err)
	}
	return root
}

func terraformPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("the terraform CLI is not on PATH; install it to check the examples")
	}
	return p
}

// terraform runs the CLI in dir and returns its combined output.
func terraform(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(terraformPath(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func TestFormat(t *testing.T) {
	root := repoRoot(t)
	out, err := terraform(t, root, nil, "fmt", "-check", "-recursive", "-diff", "-no-color", "examples")
	if err != nil {
		t.Fatalf("terraform fmt -check -recursive examples/ failed (%v); run `terraform fmt -recursive examples/`:\n%s", err, out)
	}
}

func TestExamples(t *testing.T) {
	root := repoRoot(t)
	dirs, err := exampleDirs(filepath.Join(root, "examples"))
	if err != nil {
		t.Fatal(err)
	}
	configs := map[string]*config{}
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		c, err := loadConfig(d)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		configs[filepath.ToSlash(rel)] = c
	}
	for rel, want := range pinned {
		c, ok := configs[rel]
		if !ok {
			t.Errorf("%s: missing", rel)
			continue
		}
		if got, why := c.check(); got != want {
			t.Errorf("%s: gets check %q (%s), want %q", rel, got, why, want)
		}
	}

	cli := devOverrides(t, root)
	var schema *providerSchema
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		rel = filepath.ToSlash(rel)
		c, ok := configs[rel]
		if !ok {
			continue
		}
		kind, why := c.check()
		t.Run(string(kind)+"/"+strings.TrimPrefix(rel, "examples/"), func(t *testing.T) {
			t.Logf("%s: %s check (%s)", rel, kind, why)
			switch kind {
			case checkValidate:
				validate(t, c, cli)
			case checkParse:
				if schema == nil {
					schema = joistSchema(t, cli)
				}
				for _, p := range checkJoistBlocks(c, schema) {
					t.Error(p)
				}
			}
		})
	}
}

// devOverrides writes a CLI configuration that makes joistdev/joist the
// binary in bin/, and fails when it has not been built.
func devOverrides(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(root, "bin")
	if _, err := os.Stat(filepath.Join(bin, "terraform-provider-joist")); err != nil {
		t.Fatalf("bin/terraform-provider-joist is missing (%v): run `make build` first", err)
	}
	cli := filepath.Join(t.TempDir(), "dev.tfrc")
	body := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", joistSource, bin)
	if err := os.WriteFile(cli, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cli
}

const requiredJoist = `terraform {
  required_providers {
    joist = { source = "` + joistSource + `" }
  }
}
`

// validate runs `terraform validate` on a copy of the example, so no
// working files land in examples/. `terraform init` is not run: with
// dev_overrides Terraform needs no installation, and init would ask the
// registry about the overridden provider, which is unreachable here.
func validate(t *testing.T, c *config, cli string) {
	work := filepath.Join(t.TempDir(), filepath.Base(c.dir))
	if err := copyDir(c.dir, work); err != nil {
		t.Fatal(err)
	}
	if !c.declaresJoist {
		// Registry-doc snippets rely on the page's provider block; without
		// a source the local name would mean hashicorp/joist.
		if err := os.WriteFile(filepath.Join(work, "zz_required_providers.tf"), []byte(requiredJoist), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := terraform(t, work, []string{"TF_CLI_CONFIG_FILE=" + cli}, "validate", "-no-color")
	if err != nil {
		t.Errorf("terraform validate failed (%v):\n%s", err, out)
	}
}

// joistSchema asks the CLI for the local provider's schema.
func joistSchema(t *testing.T, cli string) *providerSchema {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "providers.tf"), []byte(requiredJoist), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(terraformPath(t), "providers", "schema", "-json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+cli, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("terraform providers schema -json failed (%v):\n%s", err, stderr.String())
	}
	s, err := parseProviderSchema(out)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyDir copies a configuration directory, leaving out Terraform's
// working files.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if d.Name() == ".terraform.lock.hcl" || strings.Contains(d.Name(), ".tfstate") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
