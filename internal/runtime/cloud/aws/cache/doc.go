// Package cache holds the AWS provider's caches: a small generic TTL cache
// and the unavailable-offerings (insufficient capacity) cache that launches
// and interruption handling feed and offering discovery consults.
package cache
