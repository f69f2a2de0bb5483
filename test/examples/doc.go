// Package examples checks the Terraform configurations under examples/, the
// ones the registry docs embed and the composition examples users copy:
//
//   - every file is `terraform fmt` clean (TestFormat);
//   - a directory that is a complete configuration needing only
//     joistdev/joist (no other provider, no module, no reference to
//     anything it does not declare) passes `terraform validate` against the
//     locally built bin/terraform-provider-joist through a dev_overrides CLI
//     configuration (TestExamples, check "validate"): examples/quickstart
//     and the self-contained resource and data source examples;
//   - any other directory cannot be validated offline: its providers and
//     modules cannot be downloaded here, or it is a snippet of a larger
//     configuration (registry-doc examples that reference resources declared
//     elsewhere). It is parsed as HCL, and its joist provider, resource and
//     data source blocks are checked against the provider's schema: no
//     unknown or read-only attribute, no missing required one, through
//     nested object literals (TestExamples, check "parse"). This covers
//     examples/eks-module (hashicorp/aws and the terraform-aws-modules vpc
//     and eks modules), examples/migrate-from-karpenter-helm (hashicorp/helm
//     and alekc/kubectl, for the resources its removed blocks forget) and
//     snippets such as examples/provider.
//
// The check each directory gets is derived from its configuration and
// logged; TestExamples also pins it for the three composition examples, so
// one that starts needing another provider fails here instead of silently
// dropping to the weaker check.
//
// `terraform init` is not run: with dev_overrides the joist provider needs
// no installation, and init would ask the registry about it, which is not
// reachable offline. The checks need bin/terraform-provider-joist
// (`make build`) and the terraform CLI on PATH.
package examples
