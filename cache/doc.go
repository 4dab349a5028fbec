// Package cache holds the executor's two response caches, kept apart on
// purpose: one must never forget a request early, the other may forget any
// reply at any time.
//
// DedupStore is the strict deduplication store for duplicate requests (same
// correlation data and response topic). It inserts a placeholder at the first
// receipt, answers duplicates with the same outcome, and removes an entry only
// once its request's expiry (or a longer keep-until) has passed. Size pressure
// never evicts an entry before its request's expiry: when it is full and no
// completed entry's request has expired, new requests are refused with
// ErrFull, which the host answers with 503, rather than forgetting a request
// early and executing a non-idempotent command twice. Because entries are
// protected that long, one client could lock everyone out by filling it; so
// each invoker may hold only its share of the entries (MaxPerInvoker, over
// it ErrInvokerFull, 503 for that invoker only), and the host caps the
// expiry it honours, which bounds how long any entry is protected.
//
// ReuseCache is the cache for equivalent requests to idempotent commands
// (same command, topic, content type and payload, new correlation data; keyed
// by ReuseKey). It is a ristretto cache weighted by reply bytes and bounded by
// MaxBytes, and each reply has its TTL, checked on every Get by the injected
// clock. It may drop any reply at any time, by admission or eviction under
// size pressure: reuse only saves work, so a dropped reply costs one more
// execution and nothing else.
//
// Both have a shared form in Redis (serve --store), behind the Dedup and
// Reuse interfaces: RedisDedup, which replicas and restarts share so that
// a request runs once across them, and RedisReuse, a ReuseCache in front
// of Redis so that a reply computed on one replica is reused by the
// others. RedisDedup's Redis keeps the handlers' state too (RedisState),
// and the outbox of the messages they publish (RedisOutbox), both
// committed in the script that stores a request's outcome.
//
// Keeping the two apart, with separate types and separate memory bounds,
// means the reuse cache's size pressure can never evict a deduplication entry,
// and the dedup store's refusals never depend on how many replies are cached
// for reuse.
package cache
