/* cmdhost guest SDK for C: the envelope codec, the host imports and the
 * exports (see cmdhost.h and abi/ABI.md). */
#include "cmdhost.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define IMPORT(name) __attribute__((import_module("cmdhost"), import_name(#name)))
#define EXPORT(name) __attribute__((export_name(#name)))

IMPORT(describe) int32_t host_describe(const uint8_t *p, int32_t n);
IMPORT(request_len) int32_t host_request_len(void);
IMPORT(request_read) int32_t host_request_read(uint8_t *p, int32_t cap);
IMPORT(response_write) int32_t host_response_write(const uint8_t *p, int32_t n);
IMPORT(log) void host_log(int32_t level, const char *p, int32_t n);
IMPORT(config_get) int32_t host_config_get(const char *k, int32_t kn, uint8_t *buf, int32_t cap);
IMPORT(var_get) int32_t host_var_get(const char *k, int32_t kn, uint8_t *buf, int32_t cap);
IMPORT(var_set) int32_t host_var_set(const char *k, int32_t kn, const uint8_t *v, int32_t vn);
IMPORT(var_add) int32_t host_var_add(const char *k, int32_t kn, int64_t delta, uint8_t *out);
IMPORT(invoke) int32_t host_invoke(const uint8_t *p, int32_t n);
IMPORT(invoke_result_read) int32_t host_invoke_result_read(uint8_t *p, int32_t cap);
IMPORT(state_get) int32_t host_state_get(const char *ns, int32_t nsn, const char *k, int32_t kn, uint8_t *buf, int32_t cap, uint8_t *version);
IMPORT(state_set) int32_t host_state_set(const char *ns, int32_t nsn, const char *k, int32_t kn, const uint8_t *v, int32_t vn, int64_t ttl_ms, int64_t if_version, int32_t flags);
IMPORT(state_delete) int32_t host_state_delete(const char *ns, int32_t nsn, const char *k, int32_t kn, int64_t if_version);
IMPORT(state_add) int32_t host_state_add(const char *ns, int32_t nsn, const char *k, int32_t kn, int64_t delta, uint8_t *out);
IMPORT(state_list) int32_t host_state_list(const char *ns, int32_t nsn, const char *p, int32_t pn, const char *a, int32_t an, uint8_t *buf, int32_t cap);
IMPORT(publish) int32_t host_publish(const uint8_t *p, int32_t n);
IMPORT(http_request) int32_t host_http_request(const uint8_t *p, int32_t n);
IMPORT(http_result_read) int32_t host_http_result_read(uint8_t *p, int32_t cap);

/* ---- the envelope (ABI section 7) ---------------------------------- */

typedef struct {
	uint8_t *buf;
	size_t len, cap;
} writer;

static void put(writer *w, const void *p, size_t n) {
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 256;
		while (cap < w->len + n) cap *= 2;
		uint8_t *b = realloc(w->buf, cap);
		if (!b) abort(); /* out of memory: the host reports the trap */
		w->buf = b;
		w->cap = cap;
	}
	if (n) memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_u32(writer *w, uint32_t v) {
	uint8_t b[4] = {v, v >> 8, v >> 16, v >> 24};
	put(w, b, 4);
}

static void put_i64(writer *w, int64_t v) {
	uint8_t b[8];
	for (int i = 0; i < 8; i++) b[i] = (uint8_t)((uint64_t)v >> (8 * i));
	put(w, b, 8);
}

static void rec(writer *w, uint8_t tag, const void *p, size_t n) {
	put(w, &tag, 1);
	put_u32(w, (uint32_t)n);
	put(w, p, n);
}

static void rec_str(writer *w, uint8_t tag, const char *s) { rec(w, tag, s, strlen(s)); }

static void rec_u8(writer *w, uint8_t tag, uint8_t v) { rec(w, tag, &v, 1); }

static void rec_u32(writer *w, uint8_t tag, uint32_t v) {
	put(w, &tag, 1);
	put_u32(w, 4);
	put_u32(w, v);
}

static void rec_i64(writer *w, uint8_t tag, int64_t v) {
	put(w, &tag, 1);
	put_u32(w, 8);
	put_i64(w, v);
}

static void rec_entry(writer *w, uint8_t tag, const char *k, const char *v) {
	size_t kn = strlen(k), vn = strlen(v);
	put(w, &tag, 1);
	put_u32(w, (uint32_t)(4 + kn + vn));
	put_u32(w, (uint32_t)kn);
	put(w, k, kn);
	put(w, v, vn);
}

static uint32_t get_u32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

static int64_t get_i64(const uint8_t *p) {
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
	return (int64_t)v;
}

/* Walks an envelope: each record in turn to f; -1 when it is malformed. */
typedef int (*record_fn)(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n);

static int walk(const uint8_t *b, size_t len, record_fn f, void *ctx) {
	size_t p = 0;
	while (p < len) {
		if (len - p < 5) return -1;
		uint32_t n = get_u32(b + p + 1);
		if (n > len - p - 5) return -1;
		if (f(ctx, b[p], b + p + 5, n) != 0) return -1;
		p += 5 + (size_t)n;
	}
	return 0;
}

static char *dup_str(const uint8_t *v, uint32_t n) {
	char *s = malloc(n + 1);
	if (!s) abort();
	memcpy(s, v, n);
	s[n] = 0;
	return s;
}

static char *dup_cstr(const char *s) { return dup_str((const uint8_t *)s, (uint32_t)strlen(s)); }

static uint8_t *dup_bytes(const uint8_t *v, uint32_t n) {
	uint8_t *b = malloc(n ? n : 1);
	if (!b) abort();
	memcpy(b, v, n);
	return b;
}

static int add_entry(cmdhost_entry **list, size_t *len, const uint8_t *v, uint32_t n) {
	if (n < 4) return -1;
	uint32_t kn = get_u32(v);
	if (kn > n - 4) return -1;
	cmdhost_entry *l = realloc(*list, (*len + 1) * sizeof **list);
	if (!l) abort();
	l[*len].key = dup_str(v + 4, kn);
	l[*len].value = dup_str(v + 4 + kn, n - 4 - kn);
	*list = l;
	(*len)++;
	return 0;
}

/* ---- the request (ABI section 8) ------------------------------------ */

static int request_record(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n) {
	cmdhost_request *r = ctx;
	switch (tag) {
	case 1: free(r->command); r->command = dup_str(v, n); break;
	case 2: free(r->payload); r->payload = dup_bytes(v, n); r->payload_len = n; break;
	case 3: free(r->content_type); r->content_type = dup_str(v, n); break;
	case 4: if (n != 1) return -1; r->format = v[0]; break;
	case 5: return add_entry(&r->metadata, &r->metadata_len, v, n);
	case 6: return add_entry(&r->topic_tokens, &r->topic_tokens_len, v, n);
	case 7: free(r->invoker_id); r->invoker_id = dup_str(v, n); break;
	case 8: free(r->correlation_id); r->correlation_id = dup_bytes(v, n); r->correlation_id_len = n; break;
	case 9: if (n != 8) return -1; r->has_deadline = 1; r->deadline_unix_nanos = get_i64(v); break;
	case 10: free(r->executor_id); r->executor_id = dup_str(v, n); break;
	case 11: if (n != 4) return -1; r->attempt = get_u32(v); break;
	case 12: free(r->caller_user); r->caller_user = dup_str(v, n); break;
	case 13: free(r->caller_client_id); r->caller_client_id = dup_str(v, n); break;
	case 14: free(r->topic); r->topic = dup_str(v, n); break;
	default: break; /* a later minor version's: skipped */
	}
	return 0;
}

static void free_entries(cmdhost_entry *l, size_t n) {
	for (size_t i = 0; i < n; i++) {
		free(l[i].key);
		free(l[i].value);
	}
	free(l);
}

static void request_free(cmdhost_request *r) {
	free(r->command);
	free(r->payload);
	free(r->content_type);
	free_entries(r->metadata, r->metadata_len);
	free_entries(r->topic_tokens, r->topic_tokens_len);
	free(r->invoker_id);
	free(r->correlation_id);
	free(r->executor_id);
	free(r->caller_user);
	free(r->caller_client_id);
	free(r->topic);
}

const char *cmdhost_topic_token(const cmdhost_request *req, const char *name) {
	for (size_t i = 0; i < req->topic_tokens_len; i++) {
		if (strcmp(req->topic_tokens[i].key, name) == 0) return req->topic_tokens[i].value;
	}
	return NULL;
}

/* ---- the response (ABI section 9) ----------------------------------- */

struct cmdhost_response {
	uint32_t status; /* 0: 200 */
	int app_error;
	char *message, *prop_name, *prop_value, *content_type;
	uint8_t *payload;
	size_t payload_len;
	int has_ttl;
	int64_t ttl_ms;
	writer metadata; /* entry records, tag 9 */
};

static void set_str(char **dst, const char *s) {
	free(*dst);
	*dst = dup_str((const uint8_t *)s, (uint32_t)strlen(s));
}

void cmdhost_reply(cmdhost_response *r, const void *payload, size_t len) {
	free(r->payload);
	r->payload = dup_bytes(payload, (uint32_t)len);
	r->payload_len = len;
}

void cmdhost_reply_text(cmdhost_response *r, const char *text) { cmdhost_reply(r, text, strlen(text)); }
void cmdhost_reply_content_type(cmdhost_response *r, const char *ct) { set_str(&r->content_type, ct); }
void cmdhost_reply_metadata(cmdhost_response *r, const char *k, const char *v) { rec_entry(&r->metadata, 9, k, v); }

void cmdhost_reply_ttl_ms(cmdhost_response *r, int64_t ms) {
	r->has_ttl = 1;
	r->ttl_ms = ms;
}

void cmdhost_reply_no_content(cmdhost_response *r) { r->status = 204; }

void cmdhost_fail(cmdhost_response *r, const char *message) {
	r->status = 0;
	r->app_error = 1;
	set_str(&r->message, message);
}

void cmdhost_invalid_payload(cmdhost_response *r, const char *message) {
	r->status = 400;
	set_str(&r->message, message);
}

void cmdhost_unsupported_content_type(cmdhost_response *r, const char *ct) {
	r->status = 415;
	set_str(&r->message, "unsupported content type");
	set_str(&r->prop_name, "Content Type");
	set_str(&r->prop_value, ct);
}

static void encode_response(const cmdhost_response *r, writer *w) {
	if (r->app_error) {
		rec_u8(w, 2, 1);
	} else if (r->status) {
		rec_u32(w, 1, r->status);
	}
	if (r->message) rec_str(w, 3, r->message);
	if (r->prop_name) rec_str(w, 4, r->prop_name);
	if (r->prop_value) rec_str(w, 5, r->prop_value);
	int error = r->app_error || r->status >= 400;
	if (!error && r->status != 204 && r->payload_len) rec(w, 6, r->payload, r->payload_len);
	if (!error && r->content_type && *r->content_type) rec_str(w, 7, r->content_type);
	if (!error) put(w, r->metadata.buf, r->metadata.len);
	if (!error && r->has_ttl) rec_i64(w, 10, r->ttl_ms);
}

static void response_free(cmdhost_response *r) {
	free(r->message);
	free(r->prop_name);
	free(r->prop_value);
	free(r->content_type);
	free(r->payload);
	free(r->metadata.buf);
}

/* ---- commands and the exports (ABI section 3) ------------------------ */

typedef struct {
	char *name;
	cmdhost_handler handler;
	cmdhost_options opts;
	char *trigger; /* a trigger's filter; NULL: a command */
} command;

static command *commands;
static size_t n_commands;
static int initialized;

/* add registers a command, or a trigger on filter (not NULL). */
static void add(char *name, char *filter, cmdhost_handler handler, const cmdhost_options *opts) {
	command *c = realloc(commands, (n_commands + 1) * sizeof *c);
	if (!c) abort();
	commands = c;
	c[n_commands].name = name;
	c[n_commands].handler = handler;
	memset(&c[n_commands].opts, 0, sizeof c[n_commands].opts);
	if (opts) c[n_commands].opts = *opts;
	c[n_commands].trigger = filter;
	n_commands++;
}

void cmdhost_command(const char *name, cmdhost_handler handler, const cmdhost_options *opts) {
	add(dup_cstr(name), NULL, handler, opts);
}

void cmdhost_on_message(const char *filter, const char *name, cmdhost_handler handler, const cmdhost_options *opts) {
	add(name ? dup_cstr(name) : cmdhost_trigger_name(filter), dup_cstr(filter), handler, opts);
}

char *cmdhost_trigger_name(const char *filter) {
	writer w = {0};
	for (const char *l = filter;; l++) {
		const char *end = strchr(l, '/');
		size_t n = end ? (size_t)(end - l) : strlen(l);
		if (n == 1 && *l == '+') {
			put(&w, "any", 3);
		} else if (n == 1 && *l == '#') {
			put(&w, "all", 3);
		} else if (n >= 2 && l[0] == '{' && l[n - 1] == '}') {
			put(&w, l + 1, n - 2);
		} else {
			put(&w, l, n);
		}
		if (!end) break;
		put(&w, ".", 1);
		l = end;
	}
	put(&w, "", 1); /* the NUL */
	return (char *)w.buf;
}

static void init_once(void) {
	if (!initialized) {
		initialized = 1;
		cmdhost_init();
	}
}

EXPORT(cmdhost_abi_version) int32_t cmdhost_abi_version(void) { return CMDHOST_ABI_VERSION; }

EXPORT(cmdhost_describe) int32_t cmdhost_describe(void) {
	init_once();
	writer d = {0};
	rec_u32(&d, 1, CMDHOST_ABI_VERSION);
	for (size_t i = 0; i < n_commands; i++) {
		const cmdhost_options *o = &commands[i].opts;
		writer c = {0};
		rec_str(&c, 1, commands[i].name);
		if (o->idempotent) rec_u8(&c, 2, 1);
		if (o->response_ttl_ms) rec_i64(&c, 3, o->response_ttl_ms);
		for (const char *const *ct = o->content_types; ct && *ct; ct++) rec_str(&c, 4, *ct);
		if (o->timeout_ms) rec_i64(&c, 5, o->timeout_ms);
		if (o->topic) rec_str(&c, 6, o->topic);
		if (commands[i].trigger) rec_str(&c, 7, commands[i].trigger);
		rec(&d, 2, c.buf, c.len);
		free(c.buf);
	}
	int32_t r = host_describe(d.buf, (int32_t)d.len);
	free(d.buf);
	return r == 0 ? 0 : 1;
}

EXPORT(cmdhost_handle) int32_t cmdhost_handle(void) {
	init_once();
	int32_t n = host_request_len();
	if (n < 0) return 1;
	uint8_t *buf = malloc((size_t)n);
	if (!buf) return 1;
	if (host_request_read(buf, n) != n) {
		free(buf);
		return 2;
	}
	cmdhost_request req = {0};
	req.attempt = 1;
	int bad = walk(buf, (size_t)n, request_record, &req);
	free(buf);
	if (bad || !req.command) {
		cmdhost_log(CMDHOST_ERROR, "cmdhost sdk: the request does not decode");
		request_free(&req);
		return 2;
	}
	if (!req.content_type) req.content_type = dup_str((const uint8_t *)"", 0);
	if (!req.invoker_id) req.invoker_id = dup_str((const uint8_t *)"", 0);
	if (!req.executor_id) req.executor_id = dup_str((const uint8_t *)"", 0);
	if (!req.caller_user) req.caller_user = dup_str((const uint8_t *)"", 0);
	if (!req.caller_client_id) req.caller_client_id = dup_str((const uint8_t *)"", 0);
	if (!req.topic) req.topic = dup_str((const uint8_t *)"", 0);
	cmdhost_response resp = {0};
	size_t i = 0;
	while (i < n_commands && strcmp(commands[i].name, req.command) != 0) i++;
	if (i < n_commands) {
		commands[i].handler(&req, &resp);
		if (commands[i].trigger && !resp.app_error && resp.status < 400) { /* a handled message: 204, nothing else */
			response_free(&resp);
			memset(&resp, 0, sizeof resp);
			resp.status = 204;
		}
	} else {
		cmdhost_fail(&resp, "this module serves no such command");
	}
	writer w = {0};
	encode_response(&resp, &w);
	int32_t r = host_response_write(w.buf, (int32_t)w.len);
	if (r != 0) {
		char msg[256];
		if (r == CMDHOST_TOO_LARGE) {
			snprintf(msg, sizeof msg, "response refused by the host: the response of %zu bytes is over the host's response size bound (serve --max-response-bytes, operator maxResponseBytes)", w.len);
		} else {
			snprintf(msg, sizeof msg, "response refused by the host: result %d (a metadata key starting with __, a payload with 204, or text that is not UTF-8)", (int)r);
		}
		cmdhost_log(CMDHOST_ERROR, msg);
	}
	free(w.buf);
	response_free(&resp);
	request_free(&req);
	return r == 0 ? 0 : 4;
}

/* ---- log, config, variables ---------------------------------------- */

void cmdhost_log(int level, const char *msg) { host_log(level, msg, (int32_t)strlen(msg)); }

/* Reads a value with get, growing the buffer once: the value's length or
 * a negative result; *out malloc'd when found. */
static int32_t read_sized(int32_t (*get)(const char *, int32_t, uint8_t *, int32_t), const char *key, uint8_t **out) {
	int32_t cap = 256;
	uint8_t *buf = malloc((size_t)cap);
	if (!buf) abort();
	for (int i = 0; i < 2; i++) {
		int32_t n = get(key, (int32_t)strlen(key), buf, cap);
		if (n < 0) {
			free(buf);
			return n;
		}
		if (n <= cap) {
			*out = buf;
			return n;
		}
		free(buf);
		cap = n;
		buf = malloc((size_t)cap);
		if (!buf) abort();
	}
	free(buf);
	return -8;
}

char *cmdhost_config(const char *key) {
	uint8_t *v;
	int32_t n = read_sized(host_config_get, key, &v);
	if (n < 0) return NULL;
	char *s = dup_str(v, (uint32_t)n);
	free(v);
	return s;
}

int cmdhost_var_get(const char *key, uint8_t **value, size_t *len) {
	int32_t n = read_sized(host_var_get, key, value);
	if (n < 0) return n;
	*len = (size_t)n;
	return CMDHOST_OK;
}

int cmdhost_var_set(const char *key, const void *value, size_t len) {
	int32_t r = host_var_set(key, (int32_t)strlen(key), value, (int32_t)len);
	return r < 0 ? r : CMDHOST_OK;
}

int cmdhost_var_add(const char *key, int64_t delta, int64_t *sum) {
	uint8_t out[8];
	int32_t r = host_var_add(key, (int32_t)strlen(key), delta, out);
	if (r < 0) return r;
	*sum = get_i64(out);
	return CMDHOST_OK;
}

/* ---- the state store (ABI section 17) ------------------------------- */

/* A namespace's name and length: NULL and "" are the plugin's own. */
#define NS(ns) (ns), (int32_t)((ns) ? strlen(ns) : 0)
#define KEY(k) (k), (int32_t)strlen(k)

int cmdhost_state_get(const char *ns, const char *key, uint8_t **value, size_t *len, uint64_t *version) {
	int32_t cap = 256;
	for (int i = 0; i < 4; i++) {
		uint8_t v[8], *buf = malloc((size_t)cap);
		if (!buf) abort();
		int32_t n = host_state_get(NS(ns), KEY(key), buf, cap, v);
		if (n >= 0 && n <= cap) {
			*value = buf;
			*len = (size_t)n;
			if (version) *version = (uint64_t)get_i64(v);
			return CMDHOST_OK;
		}
		free(buf);
		if (n < 0) return n;
		cap = n; /* the value is n bytes: again with room for them */
	}
	return CMDHOST_UNAVAILABLE; /* the value kept changing size while being read */
}

int cmdhost_state_set(const char *ns, const char *key, const void *value, size_t len, const cmdhost_state_options *opts) {
	static const cmdhost_state_options none = {0};
	if (!opts) opts = &none;
	int32_t r = host_state_set(NS(ns), KEY(key), value, (int32_t)len, opts->ttl_ms, (int64_t)opts->if_version, opts->if_absent ? 1 : 0);
	return r < 0 ? r : CMDHOST_OK;
}

int cmdhost_state_delete(const char *ns, const char *key, uint64_t if_version, int *existed) {
	int32_t r = host_state_delete(NS(ns), KEY(key), (int64_t)if_version);
	if (r < 0) return r;
	if (existed) *existed = r == 1;
	return CMDHOST_OK;
}

int cmdhost_state_add(const char *ns, const char *key, int64_t delta, int64_t *sum) {
	uint8_t out[8];
	int32_t r = host_state_add(NS(ns), KEY(key), delta, out);
	if (r < 0) return r;
	*sum = get_i64(out);
	return CMDHOST_OK;
}

/* A page being decoded: each key goes to keys as its length (u32), its
 * bytes and a NUL, 5 bytes more than the key like its record, so the keys
 * never take more room than the page. */
typedef struct {
	uint8_t *keys;
	size_t len;
	size_t last; /* where the last key's length is; (size_t)-1: none */
	int more;
} page_decoder;

static int page_record(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n) {
	page_decoder *d = ctx;
	switch (tag) {
	case 1: /* a key */
		d->last = d->len;
		memcpy(d->keys + d->len, &n, 4);
		memcpy(d->keys + d->len + 4, v, n);
		d->keys[d->len + 4 + n] = 0;
		d->len += 5 + (size_t)n;
		break;
	case 2: /* more */
		if (n != 1) return -1;
		d->more = v[0] == 1;
		break;
	default: break;
	}
	return 0;
}

int cmdhost_state_list(const char *ns, const char *prefix, const char *after, size_t after_len, cmdhost_state_page *page) {
	if (!prefix) prefix = "";
	if (!after) after_len = 0;
	int32_t cap = 16 << 10;
	uint8_t *buf = malloc((size_t)cap);
	if (!buf) abort();
	int32_t n = host_state_list(NS(ns), KEY(prefix), after, (int32_t)after_len, buf, cap);
	if (n == CMDHOST_TOO_SMALL) { /* not even one key fits: room for the longest */
		free(buf);
		cap = 1 << 20;
		buf = malloc((size_t)cap);
		if (!buf) abort();
		n = host_state_list(NS(ns), KEY(prefix), after, (int32_t)after_len, buf, cap);
	}
	if (n < 0) {
		free(buf);
		return n;
	}
	page_decoder d = {malloc((size_t)n + 1), 0, (size_t)-1, 0};
	if (!d.keys) abort();
	if (walk(buf, (size_t)n, page_record, &d) != 0) {
		free(buf);
		free(d.keys);
		return CMDHOST_INVALID;
	}
	free(buf);
	free(page->keys_); /* after may have pointed into it: freed only now */
	page->keys_ = d.keys;
	page->len_ = d.len;
	page->pos_ = 0;
	page->more = d.more;
	page->last = NULL;
	page->last_len = 0;
	if (d.last != (size_t)-1) {
		uint32_t k;
		memcpy(&k, d.keys + d.last, 4);
		page->last = (const char *)d.keys + d.last + 4;
		page->last_len = k;
	}
	return CMDHOST_OK;
}

const char *cmdhost_state_next(cmdhost_state_page *page, size_t *len) {
	if (!page->keys_ || page->pos_ >= page->len_) return NULL;
	uint32_t k;
	memcpy(&k, page->keys_ + page->pos_, 4);
	const char *key = (const char *)page->keys_ + page->pos_ + 4;
	page->pos_ += 5 + (size_t)k;
	if (len) *len = k;
	return key;
}

void cmdhost_state_page_free(cmdhost_state_page *page) {
	free(page->keys_);
	memset(page, 0, sizeof *page);
}

/* ---- publishing (ABI section 18) ------------------------------------- */

int cmdhost_publish(const cmdhost_message *m) {
	writer w = {0};
	rec_str(&w, 1, m->topic ? m->topic : "");
	if (m->payload_len) rec(&w, 2, m->payload, m->payload_len);
	if (m->content_type && *m->content_type) rec_str(&w, 3, m->content_type);
	if (m->format) rec_u8(&w, 4, m->format);
	for (size_t i = 0; i < m->metadata_len; i++) rec_entry(&w, 5, m->metadata[i].key, m->metadata[i].value);
	if (m->event) {
		const cmdhost_event *e = m->event;
		writer ev = {0};
		rec_str(&ev, 1, e->type ? e->type : "");
		if (e->source && *e->source) rec_str(&ev, 2, e->source);
		if (e->subject && *e->subject) rec_str(&ev, 3, e->subject);
		if (e->data_schema && *e->data_schema) rec_str(&ev, 4, e->data_schema);
		rec(&w, 6, ev.buf, ev.len);
		free(ev.buf);
	}
	if (m->expiry_ms > 0) rec_i64(&w, 7, m->expiry_ms);
	int32_t r = host_publish(w.buf, (int32_t)w.len);
	free(w.buf);
	return r < 0 ? r : CMDHOST_OK;
}

/* ---- nested calls (ABI section 16) ----------------------------------- */

typedef struct {
	cmdhost_result *out;
	size_t n;
	int failure;
	char *message;
	size_t branches;
} invocation;

static int branch_record(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n) {
	cmdhost_result *r = ctx;
	switch (tag) {
	case 2: if (n != 1) return -1; r->outcome = v[0]; break;
	case 3: if (n != 1) return -1; r->reason = v[0]; break;
	case 4: if (n != 4) return -1; r->status = get_u32(v); break;
	case 5: if (n != 1) return -1; r->app_error = v[0]; break;
	case 6: free(r->message); r->message = dup_str(v, n); break;
	case 7: free(r->payload); r->payload = dup_bytes(v, n); r->payload_len = n; break;
	case 8: free(r->content_type); r->content_type = dup_str(v, n); break;
	default: break;
	}
	return 0;
}

/* The host sends one result per branch, in the Invocation's order. */
static int result_record(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n) {
	invocation *inv = ctx;
	switch (tag) {
	case 1: if (n != 1) return -1; inv->failure = v[0]; break;
	case 2: free(inv->message); inv->message = dup_str(v, n); break;
	case 3:
		if (inv->branches < inv->n) return walk(v, n, branch_record, &inv->out[inv->branches++]);
		break;
	default: break;
	}
	return 0;
}

static char *empty(void) { return dup_str((const uint8_t *)"", 0); }

/* fail sets every result to a failure with reason and message. */
static int fail(cmdhost_result *results, size_t n, int reason, const char *message) {
	for (size_t i = 0; i < n; i++) {
		cmdhost_result_free(&results[i]);
		results[i].outcome = CMDHOST_CALL_ERROR;
		results[i].reason = reason;
		results[i].message = dup_str((const uint8_t *)message, (uint32_t)strlen(message));
		results[i].content_type = empty();
	}
	return reason;
}

int cmdhost_fan_out(const cmdhost_sync *sync, const cmdhost_branch *branches, size_t n, cmdhost_result *results) {
	memset(results, 0, n * sizeof *results);
	if (n == 0) return 1; /* invalid: no branch */
	writer w = {0};
	for (size_t i = 0; i < n; i++) {
		const cmdhost_call *call = &branches[i].call;
		writer b = {0};
		if (branches[i].name) rec_str(&b, 1, branches[i].name);
		rec_str(&b, 2, call->command);
		if (call->executor) rec_str(&b, 3, call->executor);
		if (call->payload_len) rec(&b, 4, call->payload, call->payload_len);
		if (call->content_type) rec_str(&b, 5, call->content_type);
		if (call->timeout_ms) rec_i64(&b, 8, call->timeout_ms);
		rec(&w, 1, b.buf, b.len);
		free(b.buf);
	}
	if (sync) {
		writer s = {0};
		if (sync->strategy) rec_u8(&s, 1, (uint8_t)sync->strategy);
		if (sync->m) rec_u32(&s, 2, sync->m);
		if (sync->timeout_ms) rec_i64(&s, 3, sync->timeout_ms);
		if (sync->fail_on_timeout) rec_u8(&s, 4, 1);
		rec(&w, 2, s.buf, s.len);
		free(s.buf);
	}
	int32_t size = host_invoke(w.buf, (int32_t)w.len);
	free(w.buf);
	if (size < 0) return fail(results, n, size == -6 ? 7 : 6, "invoke failed");
	uint8_t *res = malloc((size_t)size ? (size_t)size : 1);
	if (!res) abort();
	invocation inv = {results, n, 0, NULL, 0};
	int bad = host_invoke_result_read(res, size) != size || walk(res, (size_t)size, result_record, &inv) != 0;
	free(res);
	if (bad) {
		free(inv.message);
		return fail(results, n, 6, "the invocation result does not decode");
	}
	for (size_t i = 0; i < n; i++) {
		if (!results[i].message) results[i].message = empty();
		if (!results[i].content_type) results[i].content_type = empty();
	}
	if (inv.failure) {
		if (inv.branches == 0) {
			int reason = fail(results, n, inv.failure, inv.message ? inv.message : "");
			free(inv.message);
			return reason;
		}
		free(results[0].message);
		results[0].message = inv.message ? inv.message : empty();
		return inv.failure;
	}
	free(inv.message);
	return 0;
}

int cmdhost_call_command(const cmdhost_call *call, cmdhost_result *out) {
	cmdhost_branch b = {"", *call};
	return cmdhost_fan_out(NULL, &b, 1, out);
}

void cmdhost_result_free(cmdhost_result *r) {
	free(r->message);
	free(r->payload);
	free(r->content_type);
	memset(r, 0, sizeof *r);
}

int64_t cmdhost_remaining_ns(const cmdhost_request *req) {
	if (!req->has_deadline) return -1;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t left = req->deadline_unix_nanos - ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
	return left > 0 ? left : 0;
}

/* ---- outbound HTTP (ABI section 19) ---------------------------------- */

static int http_record(void *ctx, uint8_t tag, const uint8_t *v, uint32_t n) {
	cmdhost_http_response *r = ctx;
	switch (tag) {
	case 1: if (n != 1) return -1; r->failure = v[0]; break;
	case 2: free(r->message); r->message = dup_str(v, n); break;
	case 3: if (n != 4) return -1; r->status = get_u32(v); break;
	case 4: return add_entry(&r->headers, &r->headers_len, v, n); /* a name may repeat */
	case 5: free(r->body); r->body = dup_bytes(v, n); r->body_len = n; break;
	case 6: free(r->url); r->url = dup_str(v, n); break;
	default: break;
	}
	return 0;
}

int cmdhost_http(const cmdhost_http_request *req, cmdhost_http_response *resp) {
	memset(resp, 0, sizeof *resp);
	writer w = {0};
	if (req->method && *req->method) rec_str(&w, 1, req->method);
	rec_str(&w, 2, req->url ? req->url : "");
	for (size_t i = 0; i < req->headers_len; i++) rec_entry(&w, 3, req->headers[i].key, req->headers[i].value);
	if (req->body_len) rec(&w, 4, req->body, req->body_len);
	if (req->timeout_ms > 0) rec_i64(&w, 5, req->timeout_ms);
	int32_t n = host_http_request(w.buf, (int32_t)w.len);
	free(w.buf);
	char why[160] = "";
	if (n < 0) {
		snprintf(why, sizeof why, "the host refused the request: result %d (outside a handler, or the call's deadline passed)", (int)n);
	} else {
		uint8_t *buf = malloc((size_t)n ? (size_t)n : 1);
		if (!buf) abort();
		if (host_http_result_read(buf, n) != n || walk(buf, (size_t)n, http_record, resp) != 0) {
			snprintf(why, sizeof why, "the http result does not decode");
		}
		free(buf);
	}
	if (*why) {
		cmdhost_http_response_free(resp);
		resp->failure = CMDHOST_HTTP_FAILED;
		resp->message = dup_cstr(why);
	}
	if (!resp->message) resp->message = empty();
	if (!resp->url) resp->url = empty();
	if (!resp->body) resp->body = dup_bytes((const uint8_t *)"", 0);
	return resp->failure;
}

const char *cmdhost_http_header(const cmdhost_http_response *resp, const char *name) {
	for (size_t i = 0; i < resp->headers_len; i++) {
		if (strcasecmp(resp->headers[i].key, name) == 0) return resp->headers[i].value;
	}
	return NULL;
}

const char *cmdhost_http_reason(int failure) {
	static const char *const names[] = {"none", "invalid", "denied", "dns", "connect", "tls", "timeout", "too_large",
	                                    "limit", "redirects", "unavailable", "failed"};
	return failure >= 0 && failure < (int)(sizeof names / sizeof *names) ? names[failure] : "unknown";
}

void cmdhost_http_response_free(cmdhost_http_response *resp) {
	free(resp->message);
	free_entries(resp->headers, resp->headers_len);
	free(resp->body);
	free(resp->url);
	memset(resp, 0, sizeof *resp);
}
