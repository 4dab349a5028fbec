/* bench-c: compute kernels for make bench-compute (internal/wasm
 * compute_bench_test.go). Each kernel is both a command (run through the
 * host's engine) and a plain export k_NAME(n) returning a checksum (run on
 * bare wazero), so that both runs execute the same compiled code. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdhost.h"

#define EXPORT(name) __attribute__((export_name(name)))

static uint32_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

/* A tight loop: n steps of an xorshift-multiply hash, no calls. */
static uint64_t loop(uint32_t n) {
	uint64_t h = 0x9e3779b97f4a7c15ULL;
	for (uint32_t i = 0; i < n; i++) {
		h ^= h >> 29;
		h = h * 0xbf58476d1ce4e5b9ULL + i;
	}
	return h;
}

/* SHA-256 (FIPS 180-4), over n bytes the guest writes itself. */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
    0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
    0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
    0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha_block(uint32_t st[8], const uint8_t *p) {
	uint32_t w[64];
	for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
		uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	st[0] += a, st[1] += b, st[2] += c, st[3] += d, st[4] += e, st[5] += f, st[6] += g, st[7] += h;
}

/* sha fills n bytes (a multiple of 64) and hashes them; returns the first
 * word of the digest (padding left out: a kernel, not a library). */
static uint32_t sha(uint32_t n) {
	static uint8_t *buf;
	static uint32_t cap;
	if (cap < n) {
		free(buf);
		buf = malloc(n);
		cap = n;
	}
	for (uint32_t i = 0; i < n; i++) buf[i] = (uint8_t)(i * 31 + (i >> 8));
	uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	for (uint32_t off = 0; off + 64 <= n; off += 64) sha_block(st, buf + off);
	return st[0];
}

EXPORT("k_fib") uint64_t k_fib(uint32_t n) { return fib(n); }
EXPORT("k_loop") uint64_t k_loop(uint32_t n) { return loop(n); }
EXPORT("k_sha") uint64_t k_sha(uint32_t n) { return sha(n); }

/* The commands take n as decimal text and answer the checksum. */
static uint32_t arg(const cmdhost_request *req) {
	char s[16] = {0};
	memcpy(s, req->payload, req->payload_len < 15 ? req->payload_len : 15);
	return (uint32_t)strtoul(s, NULL, 10);
}

static void answer(cmdhost_response *resp, uint64_t v) {
	char s[32];
	snprintf(s, sizeof s, "%llu", (unsigned long long)v);
	cmdhost_reply_text(resp, s);
}

static void cmd_fib(const cmdhost_request *req, cmdhost_response *resp) { answer(resp, k_fib(arg(req))); }
static void cmd_loop(const cmdhost_request *req, cmdhost_response *resp) { answer(resp, k_loop(arg(req))); }
static void cmd_sha(const cmdhost_request *req, cmdhost_response *resp) { answer(resp, k_sha(arg(req))); }

void cmdhost_init(void) {
	cmdhost_options o = {.timeout_ms = 60000};
	cmdhost_command("fib", cmd_fib, &o);
	cmdhost_command("loop", cmd_loop, &o);
	cmdhost_command("sha", cmd_sha, &o);
}
