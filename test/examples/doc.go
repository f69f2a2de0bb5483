// Package examples checks the Terraform configurations under examples/, the
// ones the registry docs embed and the composition examples users copy:
//
//   - every file is `terraform fmt` clean (TestFormat);
//   - a directory whose providers are all joistdev/joist, and which calls no
//     modules, passes `terraform validate` against the locally built
//     bin/terraform-provider-joist through a dev_overrides CLI configuration:
//     examples/provider, examples/resources/*, examples/data-sources/* and
//     examples/quickstart (TestExamples, check "validate");
//   - a directory that needs other providers or registry modules cannot be
//     validated without downloading them, so it is parsed as HCL and its
//     joist resources are checked for the attribute names the provider
//     schema has: examples/eks-module (hashicorp/aws and
//     terraform-aws-modules/eks) and examples/migrate-from-karpenter-helm
//     (alekc/kubectl) (TestExamples, check "parse").
//
// The check each directory gets is derived from its configuration;
// TestExamples also pins it for the directories named above, so an example
// that starts needing another provider fails here instead of silently
// dropping to the weaker check.
//
// The validate checks need bin/terraform-provider-joist (`make build`) and
// the terraform CLI on PATH.
package examples
