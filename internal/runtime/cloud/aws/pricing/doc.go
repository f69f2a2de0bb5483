// Package pricing knows what an instance costs per hour: on-demand prices
// from the AWS Pricing API (an embedded table compiled from public prices
// stands in for isolated VPCs and until the first refresh), spot prices
// per zone from the EC2 spot price history, and what its EBS volumes cost
// (the Pricing API's volume products, over an embedded table likewise).
package pricing

//go:generate go run ./gen -in ../../../../awssim/catalog/data/prices_on_demand.json
//go:generate go run ./gen -in= -ebs-in ../../../../awssim/catalog/data/ebs_prices.json
