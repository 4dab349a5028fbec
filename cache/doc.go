// Package cache will hold the strict dedup store (a plain map with
// placeholders, expiry-only eviction and a hard bound answered with 503)
// and the idempotent reuse cache (ristretto, cost = reply bytes, TTL). The
// two are kept apart so that size pressure on reuse can never evict a
// dedup entry before its request's expiry.
package cache
