// Package wire reads EC2 query-protocol requests into the aws-sdk-go-v2 EC2
// input types and writes the SDK's output types as the XML the SDK parses.
// Using the SDK's own types means the simulator cannot drift from the shapes
// real clients send and expect; names.go carries the wire names the EC2 model
// gives fields (generated from the pinned SDK with `go generate`).
package wire

//go:generate go run ./gen
