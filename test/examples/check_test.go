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
		{"complete configuration", `
variable "name" {
  type = string
}
locals {
  labels = { team = var.name }
}
resource "joist_interruption_queue" "q" { name = var.name }
resource "joist_node_pool" "a" {
  name   = joist_interruption_queue.q.name
  labels = local.labels
}`, checkValidate},
		{"snippet referencing a resource declared elsewhere", `
resource "joist_controller" "c" { interruption_queue = joist_interruption_queue.demo.name }`, checkParse},
		{"snippet referencing an undeclared variable", `resource "joist_node_pool" "a" { name = var.name }`, checkParse},
		{"reference to an aws resource", `provider "joist" { cluster_name = aws_eks_cluster.main.name }`, checkParse},
		{"moved and removed name absent resources", `
resource "joist_node_pool" "a" {}
moved {
  from = joist_node_pool.b
  to   = joist_node_pool.a
}
removed {
  from = joist_node_pool.c
  lifecycle {
    destroy = false
  }
}`, checkValidate},
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
	s := &providerSchema{Provider: schemaEntry{Block: schemaBlock{Attributes: map[string]*schemaAttribute{
		"cluster_name": {Optional: true},
	}}}, Resources: map[string]schemaEntry{
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
provider "joist" {
  alias        = "x"
  cluster_name = "a"
}
provider "joist" {
  cluster = "a"
}
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
		`provider "joist": unknown attribute "cluster"`,
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q; got:\n%s", want, problems)
		}
	}
	if strings.Contains(problems, "joist_thing.good") || strings.Contains(problems, "aws_iam_role") {
		t.Errorf("problems name a valid block:\n%s", problems)
	}
}
