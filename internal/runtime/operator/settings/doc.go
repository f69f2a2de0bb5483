// Package settings holds the controller's settings: their flags,
// environment variables (Karpenter's names), defaults and rules. It is pure
// (no clients, no files), so the controller parses its environment with it
// and the provider checks a joist_controller's settings with the same rules
// at terraform plan. The leader-election namespace is left empty when unset:
// the operator fills in the pod's own.
package settings
