// Package nodeclass holds the EC2NodeClass status controller: it resolves
// a node class's subnets, security groups, AMIs and instance profile into
// its status, validates it, sets its conditions (Ready gates its NodePools),
// stamps its static hash, and on deletion waits for its NodeClaims to go
// before deleting the instance profile and launch templates made for it.
package nodeclass
