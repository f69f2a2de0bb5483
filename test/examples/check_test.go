package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, src string) *config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckFollowsConfiguration(t *testing.T) {
	cases := []struct {
		name, src string
		want      check
	}{
		{"joist resource without required_providers", `resource "joist_node_pool" "a" {}`, checkValidate},
		{"joist from another host", `
terraform {
  required_providers {
    joist = { source = "example.com/JoistDev/joist" }
  }
}
provider "joist" {}`, checkParse},
		{"joist declared", `
terraform {
  required_providers {
    joist = { source = "joistdev/joist", version = "~> 0.1" }
  }
}
provider "joist" {}`, checkValidate},
		{"implied aws resource", `
resource "joist_node_pool" "a" {}
resource "aws_iam_role" "b" {}`, checkParse},
		{"module call", `module "eks" { source = "terraform-aws-modules/eks/aws" }`, checkParse},
		{"declared kubectl", `
terraform {
  required_providers {
    kubectl = { source = "alekc/kubectl" }
  }
}`, checkParse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := writeConfig(t, tc.src).check(); got != tc.want {
				t.Errorf("check = %q (%s), want %q", got, why, tc.want)
			}
		})
	}
}

func TestCheckJoistBlocksAgainstSchema(t *testing.T) {
	s := &providerSchema{Resources: map[string]schemaEntry{
		"joist_thing": {Block: schemaBlock{Attributes: map[string]*schemaAttribute{
			"name": {Required: true},
			"id":   {Computed: true},
			"spec": {Optional: true, NestedType: &nestedObject{NestingMode: "single", Attributes: map[string]*schemaAttribute{
				"size": {Optional: true},
				"items": {Optional: true, NestedType: &nestedObject{NestingMode: "list", Attributes: map[string]*schemaAttribute{
					"key": {Required: true},
				}}},
			}}},
			"labels": {Optional: true},
		}}},
	}}
	c := writeConfig(t, `
resource "joist_thing" "good" {
  name   = "a"
  labels = { anything = "goes" }
  spec = {
    size  = 1
    items = [{ key = "k" }, var.item]
  }
  depends_on = []
}
resource "joist_thing" "bad" {
  id = "x"
  spec = {
    sise  = 1
    items = [{ value = "v" }]
  }
}
resource "joist_other" "c" {}
resource "aws_iam_role" "ignored" { whatever = 1 }
`)
	problems := strings.Join(checkJoistBlocks(c, s), "\n")
	for _, want := range []string{
		`joist_thing.bad: attribute "id" is read-only`,
		`joist_thing.bad: required attribute "name" is missing`,
		`joist_thing.bad.spec: unknown attribute "sise"`,
		`joist_thing.bad.spec.items[0]: unknown attribute "value"`,
		`joist_thing.bad.spec.items[0]: required attribute "key" is missing`,
		`joist_other.c: the provider has no such resource type`,
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q; got:\n%s", want, problems)
		}
	}
	if strings.Contains(problems, "joist_thing.good") || strings.Contains(problems, "aws_iam_role") {
		t.Errorf("problems name a valid block:\n%s", problems)
	}
}
