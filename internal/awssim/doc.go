// Package awssim is a local AWS on loopback: EC2, SSM, Pricing, SQS,
// EventBridge, IAM, STS and EKS speaking their real wire protocols, so that
// aws-sdk-go-v2 clients reach it through the SDK's standard AWS_ENDPOINT_URL
// with static credentials and nothing else changed. Requests are routed by
// the service in their SigV4 credential scope, recorded for tests, and can be
// throttled, failed or slowed on purpose. Simulated instances become
// Kubernetes Nodes through a kubelet stand-in when a cluster is configured.
//
// Administration (request log, faults, capacity, interruptions, AMI
// releases) is available through the Go API and over HTTP under /_awssim/,
// a path no AWS API uses.
package awssim
