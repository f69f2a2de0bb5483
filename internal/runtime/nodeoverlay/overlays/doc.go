// Package overlays is the pure part of NodeOverlays: which overlays apply to
// which offerings and instance types of which pool, the conflict rule, and
// the adjusted prices and capacities. The nodeoverlay controller publishes
// its table to the cloud provider; the plan-time impact prediction evaluates
// the same table against the planned objects.
package overlays
