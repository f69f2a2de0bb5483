// Package protocol holds what every simulated AWS service shares on the wire:
// request IDs, SigV4 credential scopes, operation names and error bodies in
// the shape each protocol family (EC2 query, AWS query, JSON, REST-JSON) uses.
package protocol
