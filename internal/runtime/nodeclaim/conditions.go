// Package nodeclaim holds what the NodeClaim controllers share: condition
// bookkeeping and lookups between claims and Nodes. The controllers live in
// lifecycle (launch, registration, initialization, liveness) and
// garbagecollection; deleted claims are finished by package termination.
package nodeclaim

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/joistdev/terraform-provider-joist/internal/runtime/apis/v1"
)

// Set sets a condition; the transition time only moves when the status does.
func Set(claim *v1.NodeClaim, typ string, status metav1.ConditionStatus, reason, message string) {
	if reason == "" {
		reason = typ
	}
	meta.SetStatusCondition(&claim.Status.Conditions, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: truncate(message, 300), ObservedGeneration: claim.Generation,
	})
}

// Get returns the condition of that type, or nil.
func Get(claim *v1.NodeClaim, typ string) *metav1.Condition {
	return meta.FindStatusCondition(claim.Status.Conditions, typ)
}

// IsTrue reports whether the condition is True.
func IsTrue(claim *v1.NodeClaim, typ string) bool {
	return meta.IsStatusConditionTrue(claim.Status.Conditions, typ)
}

// InitConditions marks every lifecycle condition Unknown until it is known.
func InitConditions(claim *v1.NodeClaim) {
	for _, t := range append([]string{v1.ConditionTypeReady}, v1.NodeClaimReadyConditions...) {
		if Get(claim, t) == nil {
			Set(claim, t, metav1.ConditionUnknown, "AwaitingReconciliation", "object is awaiting reconciliation")
		}
	}
}

// SetReady derives the root Ready condition from Launched, Registered and
// Initialized: False if any is False, Unknown if any is Unknown, else True.
func SetReady(claim *v1.NodeClaim) {
	var notTrue []string
	status := metav1.ConditionTrue
	for _, t := range v1.NodeClaimReadyConditions {
		c := Get(claim, t)
		switch {
		case c == nil || c.Status == metav1.ConditionUnknown:
			if status == metav1.ConditionTrue {
				status = metav1.ConditionUnknown
			}
			notTrue = append(notTrue, t+"=Unknown")
		case c.Status == metav1.ConditionFalse:
			status = metav1.ConditionFalse
			notTrue = append(notTrue, t+"=False")
		}
	}
	if status == metav1.ConditionTrue {
		Set(claim, v1.ConditionTypeReady, status, v1.ConditionTypeReady, "")
		return
	}
	Set(claim, v1.ConditionTypeReady, status, "UnhealthyDependents", strings.Join(notTrue, ", "))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s...", s[:n-3])
}
