// Package aws is the runtime's cloud provider on Amazon EC2: it implements
// cloud.Provider over aws-sdk-go-v2 (EC2, SSM, Pricing, IAM), reading
// EC2NodeClasses through a controller-runtime client. Sub-packages hold one
// concern each: instance types and offerings, prices, subnets, security
// groups, AMIs, instance profiles, launch templates, user data, instances
// and the unavailable-offerings cache.
package aws
