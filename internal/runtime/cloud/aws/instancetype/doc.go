// Package instancetype discovers the instance types a node class can launch:
// DescribeInstanceTypes and DescribeInstanceTypeOfferings (paginated and
// cached), every type's well-known labels, capacity and allocatable from the
// overhead model, and offerings per zone and capacity type with prices and
// availability from the unavailable-offerings cache.
package instancetype
