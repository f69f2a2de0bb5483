// Package ttlcache is a small generic cache whose entries expire a fixed
// time after they were set.
package ttlcache
