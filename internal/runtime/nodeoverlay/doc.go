// Package nodeoverlay applies NodeOverlays (karpenter.sh/v1alpha1) to the
// instance types of each NodePool, as Karpenter v1.15 does: the controller
// validates every overlay, finds the conflicts between overlays of equal
// weight, reports both on the overlays' ValidationSucceeded condition, and
// publishes a table of price and capacity changes per pool and instance
// type; the cloud provider applies that table wherever it lists a pool's
// instance types, so provisioning, consolidation, drift and the launch
// itself see the same adjusted values.
package nodeoverlay
