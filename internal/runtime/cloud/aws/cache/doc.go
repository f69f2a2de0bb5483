// Package cache holds the unavailable-offerings (insufficient capacity)
// cache that launches and interruption handling feed and offering discovery
// consults.
package cache
