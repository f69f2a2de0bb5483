// Package pods holds the predicates the controllers ask of a pod, each
// written once: terminal, mirror, owned by a DaemonSet, critical, drainable,
// protected by do-not-disrupt, provisionable and reschedulable.
package pods
