// Package ami resolves an EC2NodeClass's AMI selector terms to images:
// aliases (al2023, al2, bottlerocket, windows at latest or a release) through
// the EKS-optimized SSM parameters, and id, name, owner, tag and
// ssmParameter terms through DescribeImages. Each image carries the
// requirements an instance type must meet to use it (architecture, and GPU
// or accelerator presence for accelerated variants); for every requirement
// set only the newest image is kept.
package ami
