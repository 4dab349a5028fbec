// Package cache holds the executor's two response caches, kept apart on
// purpose (seed command-cache.md).
//
// DedupStore is the strict deduplication store for duplicate requests (same
// correlation data and response topic). It inserts a placeholder at the first
// receipt, answers duplicates with the same outcome, and removes an entry only
// once its request's expiry (or a longer keep-until) has passed. It never
// evicts under size pressure: when it is full, new requests are refused with
// ErrFull, which the host answers with 503, rather than forgetting a request
// early and executing a non-idempotent command twice.
//
// The reuse cache for equivalent idempotent requests (cost-weighted by reply
// bytes, TTL-bounded) may drop entries at any time; keeping it separate means
// its size pressure can never evict a deduplication entry.
package cache
