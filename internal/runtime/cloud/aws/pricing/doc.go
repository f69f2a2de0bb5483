// Package pricing knows what an instance costs per hour: on-demand prices
// from the AWS Pricing API (the table internal/ec2data ships stands in for
// isolated VPCs and until the first refresh), spot prices per zone from the
// EC2 spot price history, and what its EBS volumes cost (the Pricing API's
// volume products, over the shipped table likewise).
package pricing
