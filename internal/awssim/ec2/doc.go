// Package ec2 is the simulated Amazon EC2 of awssim: the query protocol with
// the XML the SDK parses, a seeded VPC (subnets and security groups per zone,
// EKS-optimized images), launch templates, CreateFleet and RunInstances over
// finite capacity pools, and instances that move through their states over
// time and announce each change as an EventBridge event.
package ec2
