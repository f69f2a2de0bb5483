// Package demo is `make demo`: the product's main job on the local sandbox.
//
// It brings the sandbox up, applies examples/quickstart with the locally
// built provider (a dev_overrides CLI configuration, so no registry is
// asked), and then drives a workload through the autoscaler's life: scale
// up, scale down and consolidation, a spot interruption and an AMI release
// that drifts every node. A live line shows the cluster as it changes, and a
// table sums up each phase: nodes, instance and capacity types, $/h, time
// and pods. Down is `make demo-down`: terraform destroy first, then a check
// that awssim holds no live instance, then the sandbox stops.
//
// Every observation comes from the cluster and from awssim through the AWS
// SDK, as a user would see it; the prices are the catalog's.
package demo
