// Package interruption consumes the SQS queue that EventBridge fills with
// EC2 and AWS Health events about instances (spot interruption warnings,
// scheduled changes, state changes, rebalance recommendations, capacity
// reservation interruptions) and acts before EC2 does: the NodeClaim of an
// instance about to go away is deleted, so its node is cordoned and drained
// through the normal termination path. rules.go holds the EventBridge rules
// and queue policy the queue needs, shared with the Terraform resource that
// creates them.
//
// The operator registers it when INTERRUPTION_QUEUE is set, with the cloud
// provider's unavailable-offerings cache:
//
//	interruption.NewController(interruption.Options{
//		Kube: mgr.GetClient(), SQS: sqs.NewFromConfig(awsCfg), QueueName: settings.InterruptionQueue,
//		Unavailable: provider.UnavailableOfferings(), Recorder: recorder, Logger: logger,
//	}).Register(mgr)
package interruption
