/* cmdhost guest SDK for C: command handlers that cmdhost serves over MQTT,
 * built as a WebAssembly reactor by clang with wasi-libc:
 *
 *   clang --target=wasm32-wasi -mexec-model=reactor -O2 -I sdk/c \
 *     -o plugin.wasm plugin.c sdk/c/cmdhost.c
 *
 * A thin layer over the ABI (abi/ABI.md in the cmdhost repository): the
 * envelope codec, the host imports and the exports the host calls. The
 * plugin defines cmdhost_init(), which registers its commands:
 *
 *   static void greet(const cmdhost_request *req, cmdhost_response *resp) {
 *       cmdhost_reply(resp, req->payload, req->payload_len);
 *   }
 *   void cmdhost_init(void) { cmdhost_command("greet", greet, NULL); }
 *
 * Strings the SDK hands over are NUL-terminated copies; a handler may keep
 * nothing of its request after it returns. */
#ifndef CMDHOST_H
#define CMDHOST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CMDHOST_ABI_VERSION 1

/* A map entry: metadata and topic tokens. */
typedef struct {
	char *key;
	char *value;
} cmdhost_entry;

/* One request (ABI section 8). */
typedef struct {
	char *command;
	uint8_t *payload;
	size_t payload_len;
	char *content_type; /* "" when none */
	uint8_t format;     /* 0 bytes, 1 UTF-8 */
	cmdhost_entry *metadata;
	size_t metadata_len;
	cmdhost_entry *topic_tokens;
	size_t topic_tokens_len;
	char *invoker_id;
	uint8_t *correlation_id;
	size_t correlation_id_len;
	int has_deadline;
	int64_t deadline_unix_nanos;
	char *executor_id;
	uint32_t attempt; /* 1, then 2 and up for retries after a timeout */
	/* The verified caller (ABI section 8, tags 12 and 13): the user name
	 * and client id the host knows sent the request, "" when it knows
	 * none. Unlike invoker_id, which the invoker wrote, no client
	 * chooses them. */
	char *caller_user;
	char *caller_client_id;
	/* The topic a trigger's message came on (ABI section 20; the values of
	 * its filter's {token} levels are in topic_tokens); "" for a command's
	 * request. */
	char *topic;
} cmdhost_request;

/* The value of the request's topic token name (a trigger's {token} level,
 * or a command's topic pattern's); NULL when it has none. */
const char *cmdhost_topic_token(const cmdhost_request *req, const char *name);

/* The reply a handler builds: a 200 unless it says otherwise. */
typedef struct cmdhost_response cmdhost_response;

/* Sets the reply's payload (copied). */
void cmdhost_reply(cmdhost_response *r, const void *payload, size_t len);
/* Sets the reply's payload to a NUL-terminated string (copied). */
void cmdhost_reply_text(cmdhost_response *r, const char *text);
void cmdhost_reply_content_type(cmdhost_response *r, const char *content_type);
/* Adds a user property to the reply (a key must not start with "__"). */
void cmdhost_reply_metadata(cmdhost_response *r, const char *key, const char *value);
/* How long this reply may be reused; 0: not at all. */
void cmdhost_reply_ttl_ms(cmdhost_response *r, int64_t ms);
/* 204: no payload. */
void cmdhost_reply_no_content(cmdhost_response *r);
/* An application error: 500, the handler ran and failed. */
void cmdhost_fail(cmdhost_response *r, const char *message);
/* 400: the payload is invalid. */
void cmdhost_invalid_payload(cmdhost_response *r, const char *message);
/* 415: the request's content type is not one the command takes. */
void cmdhost_unsupported_content_type(cmdhost_response *r, const char *content_type);

typedef void (*cmdhost_handler)(const cmdhost_request *req, cmdhost_response *resp);

/* A command's settings (ABI section 10); all zero: the defaults. */
typedef struct {
	int idempotent;
	int64_t response_ttl_ms; /* idempotent commands only */
	const char *const *content_types; /* NULL-terminated; NULL: any */
	int64_t timeout_ms;      /* 0: the host's default */
	const char *topic;       /* NULL: rpc/{executorId}/{commandName} */
} cmdhost_options;

/* Registers a command; call it from cmdhost_init. opts may be NULL. */
void cmdhost_command(const char *name, cmdhost_handler handler, const cmdhost_options *opts);

/* Registers a trigger (ABI section 20); call it from cmdhost_init. handler
 * runs for each message published on the topic filter, whose levels are
 * literal, a {token} (any one level; its value in the message's
 * topic_tokens), + (any one level) or, last, # (any levels). name NULL: the
 * trigger is named after its filter (cmdhost_trigger_name). The host
 * subscribes only when the plugin's operator file confirms it by name
 * ("triggers": {"NAME": {}}), and never to its own topics (a first level of
 * rpc, cmdhost, clients, statestore, or one starting with $). The handler
 * gets the message as a request (its topic in topic) and fails the
 * attempt with cmdhost_fail (or a status of 400 or more); otherwise the
 * message is handled (the host commits what the call wrote and published,
 * and acknowledges it) and the rest of the reply is not used. A failed
 * attempt (a trap, the deadline too) runs again, up to the trigger's
 * attempts, then the message is dropped. opts (may be NULL): timeout_ms,
 * idempotent and content_types apply as to a command; a trigger has no
 * topic and no response_ttl_ms. */
void cmdhost_on_message(const char *filter, const char *name, cmdhost_handler handler, const cmdhost_options *opts);

/* The name a trigger on filter has when cmdhost_on_message is given none:
 * the filter's levels joined with '.', a {token} level giving its name, +
 * "any" and # "all" ("sensors/{device}/temp" is "sensors.device.temp");
 * malloc'd (free it). */
char *cmdhost_trigger_name(const char *filter);

/* Defined by the plugin: registers its commands. Called once per instance. */
void cmdhost_init(void);

/* Log levels, as the host's (Go's log/slog). */
enum { CMDHOST_DEBUG = -4, CMDHOST_INFO = 0, CMDHOST_WARN = 4, CMDHOST_ERROR = 8 };
void cmdhost_log(int level, const char *msg);

/* The operator's configuration value for key, malloc'd (free it); NULL
 * when it is not set. */
char *cmdhost_config(const char *key);

/* Results of the variable and state functions (ABI section 5). */
enum {
	CMDHOST_OK = 0,
	CMDHOST_NOT_FOUND = -1,
	CMDHOST_TOO_LARGE = -2,
	CMDHOST_LIMIT = -3, /* the variable space, or the state namespace, is full */
	CMDHOST_NOT_INTEGER = -5,
	CMDHOST_INVALID = -7,
	CMDHOST_TOO_SMALL = -8,
	CMDHOST_DENIED = -9,
	CMDHOST_CONFLICT = -10,
	CMDHOST_UNAVAILABLE = -11,
};
/* A plugin variable, kept by the host and shared by every instance: *value
 * is malloc'd (free it). CMDHOST_OK, CMDHOST_NOT_FOUND or an error. */
int cmdhost_var_get(const char *key, uint8_t **value, size_t *len);
int cmdhost_var_set(const char *key, const void *value, size_t len);
/* Adds delta to a decimal integer variable (absent: 0), atomically. */
int cmdhost_var_add(const char *key, int64_t delta, int64_t *sum);

/* The durable state store (ABI section 17): keys and values kept by the
 * host, seen by every replica. ns is NULL for the plugin's own namespace,
 * or the name of a shared one the operator file grants ("state":
 * {"shared": {"NAME": "read"}} or "read-write"). Keys are NUL-terminated
 * strings, values bytes. A handler's writes are staged: it reads them back
 * at once, and everyone else sees them when its reply is recorded, all of
 * them or none. Each function returns CMDHOST_OK or a negative result:
 * CMDHOST_NOT_FOUND (no such key), CMDHOST_CONFLICT (a condition failed),
 * CMDHOST_LIMIT (the namespace is full), CMDHOST_TOO_LARGE (a key, value or
 * the call's writes over their bound), CMDHOST_DENIED (the namespace is not
 * granted, or granted read-only), CMDHOST_UNAVAILABLE (the store cannot be
 * reached; nothing staged), CMDHOST_NOT_INTEGER, CMDHOST_INVALID (a bad
 * namespace name, an empty key, a bad option). */

/* The key's value, *value malloc'd (free it), and its version (0 for a key
 * this call wrote, until its reply is recorded); version may be NULL. */
int cmdhost_state_get(const char *ns, const char *key, uint8_t **value, size_t *len, uint64_t *version);

/* Conditions and expiry of a cmdhost_state_set; NULL or all zero: set
 * unconditionally, never to expire. */
typedef struct {
	int64_t ttl_ms;      /* the key expires this long after the commit; 0: never */
	uint64_t if_version; /* only if the key's version is this (compare-and-set); 0: any */
	int if_absent;       /* only if the key does not exist */
} cmdhost_state_options;

/* Stages key = value (CMDHOST_CONFLICT when a condition does not hold). */
int cmdhost_state_set(const char *ns, const char *key, const void *value, size_t len, const cmdhost_state_options *opts);
/* Stages the key's removal, only if its version is if_version when that is
 * not 0; *existed (may be NULL) says whether the key exists. */
int cmdhost_state_delete(const char *ns, const char *key, uint64_t if_version, int *existed);
/* Adds delta to the key read as a decimal integer (absent: 0) and stages
 * the sum. Two calls adding to one key at once cannot both commit: the
 * later one runs again. */
int cmdhost_state_add(const char *ns, const char *key, int64_t delta, int64_t *sum);

/* A page of keys of cmdhost_state_list. Start from {0}; free it with
 * cmdhost_state_page_free. */
typedef struct {
	int more;          /* more keys follow: list again after last */
	const char *last;  /* the page's last key (NUL-terminated), NULL when none */
	size_t last_len;
	/* The SDK's: the keys and where cmdhost_state_next is. */
	uint8_t *keys_;
	size_t len_, pos_;
} cmdhost_state_page;

/* Reads into *page the keys that start with prefix (NULL: all) and sort
 * after the after_len bytes at after (NULL: from the first), in byte
 * order, at most 256 of them; the next page is after page->last:
 *
 *   cmdhost_state_page page = {0};
 *   int r = cmdhost_state_list(NULL, "users/", NULL, 0, &page);
 *   for (; r == CMDHOST_OK; r = cmdhost_state_list(NULL, "users/", page.last, page.last_len, &page)) {
 *       size_t len;
 *       for (const char *k; (k = cmdhost_state_next(&page, &len));) use(k);
 *       if (!page.more) break;
 *   }
 *   cmdhost_state_page_free(&page);
 *
 * The page's previous keys (after among them) are freed only once the new
 * ones are read; on an error the page is left as it was. */
int cmdhost_state_list(const char *ns, const char *prefix, const char *after, size_t after_len, cmdhost_state_page *page);
/* The page's next key, NUL-terminated (len: its length, a key may hold a
 * NUL; may be NULL), valid until the page is listed again or freed; NULL
 * after the last. */
const char *cmdhost_state_next(cmdhost_state_page *page, size_t *len);
void cmdhost_state_page_free(cmdhost_state_page *page);

/* Publishing (ABI section 18): a handler sends a message (an event, an
 * alarm, a reading) to a topic its operator file grants ("publish":
 * {"topics": [...]}; nothing is granted by default). A command that is not
 * idempotent sends its messages once its reply is recorded, in the same
 * commit as its state writes: a call that fails sends none, a request
 * delivered twice sends them once, and a message may arrive more than
 * once, always with one id (the user property cmdhost-message-id). An
 * idempotent command's go out as the call runs. */

/* A message's CloudEvents attributes, each at most 512 bytes; the host
 * adds specversion, id (the message's id) and time. */
typedef struct {
	const char *type;        /* required */
	const char *source;      /* NULL: /cmdhost/EXECUTOR/PLUGIN */
	const char *subject;     /* NULL: none */
	const char *data_schema; /* NULL: none */
} cmdhost_event;

/* A message to publish; the fields left zero are absent. */
typedef struct {
	const char *topic; /* a topic name: no wildcard, no empty level */
	const void *payload;
	size_t payload_len;
	const char *content_type;
	uint8_t format; /* 0 bytes, 1 UTF-8 */
	/* User properties: names not starting with "__" (the protocol's), not
	 * cmdhost-message-id nor, with an event, a CloudEvents attribute. */
	const cmdhost_entry *metadata;
	size_t metadata_len;
	const cmdhost_event *event; /* makes the message a CloudEvent (binary mode) */
	int64_t expiry_ms;          /* 0: none */
} cmdhost_message;

/* Publishes m: CMDHOST_OK, or CMDHOST_DENIED (no grant covers the topic;
 * the host's own topics are never granted), CMDHOST_LIMIT (over the
 * plugin's rate, or the outbox is full: try later), CMDHOST_TOO_LARGE (over
 * the call's bound of messages or bytes), CMDHOST_INVALID (not a topic
 * name, a reserved property, bad UTF-8, an event without a type),
 * CMDHOST_UNAVAILABLE (the host cannot take messages now). */
int cmdhost_publish(const cmdhost_message *m);

/* Outbound HTTP (ABI section 19): a handler calls an HTTP API on a host its
 * operator file grants ("http": {"hosts": [...]}; nothing is granted by
 * default). The guest is blocked while the request runs; the call's
 * deadline always cuts it. HTTP is not transactional: a request a call
 * made has happened even if the call then fails or runs again (at least
 * once); for a command that is not idempotent the host adds an
 * Idempotency-Key header (unless the request sets one), the same at every
 * run of the same request. */

/* A request; the fields left zero are absent. */
typedef struct {
	const char *method; /* NULL: GET; CONNECT and TRACE are refused */
	const char *url;    /* an absolute http or https URL */
	/* Name and value, a value each: a name may repeat. The host sets Host,
	 * Content-Length, Transfer-Encoding and the connection's headers
	 * itself (a request that names one is invalid). */
	const cmdhost_entry *headers;
	size_t headers_len;
	const void *body;
	size_t body_len;
	int64_t timeout_ms; /* 0: the grant's (10 s by default); a longer one is cut to it */
} cmdhost_http_request;

/* Why a request got no response (ABI section 19); a later host may add
 * reasons: treat any other as a failure. */
enum {
	CMDHOST_HTTP_INVALID = 1,     /* the request breaks the rules */
	CMDHOST_HTTP_DENIED = 2,      /* the grant does not cover it, or its address */
	CMDHOST_HTTP_DNS = 3,         /* the name does not resolve */
	CMDHOST_HTTP_CONNECT = 4,     /* refused, unreachable, reset */
	CMDHOST_HTTP_TLS = 5,         /* the handshake failed */
	CMDHOST_HTTP_TIMEOUT = 6,     /* no response within the timeout */
	CMDHOST_HTTP_TOO_LARGE = 7,   /* the request's body, or the response's headers or body */
	CMDHOST_HTTP_LIMIT = 8,       /* the call's bound of requests, or the plugin's rate */
	CMDHOST_HTTP_REDIRECTS = 9,   /* more redirects than the grant follows */
	CMDHOST_HTTP_UNAVAILABLE = 10, /* the host offers no outbound HTTP */
	CMDHOST_HTTP_FAILED = 11,     /* anything else */
};

/* The result of a request: a response (failure 0, whatever its status: a
 * 404 or a 500 is a response) or why there is none. Strings are
 * NUL-terminated, "" when absent, and body is never NULL; free it with
 * cmdhost_http_response_free. */
typedef struct {
	int failure;   /* 0, or CMDHOST_HTTP_DENIED ... */
	char *message; /* with a failure, why */
	uint32_t status;
	cmdhost_entry *headers; /* a value each, names as Go writes them (Content-Type) */
	size_t headers_len;
	uint8_t *body;
	size_t body_len;
	char *url; /* the URL that answered: the request's, or the last redirect's */
} cmdhost_http_response;

/* Sends req and fills *resp; returns resp->failure. */
int cmdhost_http(const cmdhost_http_request *req, cmdhost_http_response *resp);
/* The first value of the response's header name (any case); NULL when it
 * has none. */
const char *cmdhost_http_header(const cmdhost_http_response *resp, const char *name);
/* A failure's ABI name: "invalid", "denied", "dns", "connect", "tls",
 * "timeout", "too_large", "limit", "redirects", "unavailable", "failed";
 * "none" for 0, "unknown" for a later host's. */
const char *cmdhost_http_reason(int failure);
void cmdhost_http_response_free(cmdhost_http_response *resp);

/* One nested call (ABI section 16). */
typedef struct {
	const char *command;
	const char *executor; /* NULL: this host */
	const void *payload;
	size_t payload_len;
	const char *content_type;
	int64_t timeout_ms; /* 0: the caller's deadline alone */
} cmdhost_call;

enum { CMDHOST_DONE = 0, CMDHOST_TIMED_OUT = 1, CMDHOST_NOT_ARRIVED = 2, CMDHOST_CALL_ERROR = 3 };

/* A nested call's result; free it with cmdhost_result_free. */
typedef struct {
	int outcome; /* CMDHOST_DONE ... */
	int reason;  /* with CMDHOST_CALL_ERROR, or of a failed invocation */
	uint32_t status;
	int app_error;
	char *message;
	uint8_t *payload;
	size_t payload_len;
	char *content_type;
} cmdhost_result;

/* Calls one command and waits. 0: *out holds its result; otherwise the
 * invocation failed as a whole and the value is its reason (ABI section
 * 16: 1 invalid, 2 unavailable, 3 cycle, 4 depth, 6 host fault, 7
 * canceled...), out->message says why. */
int cmdhost_call_command(const cmdhost_call *call, cmdhost_result *out);
void cmdhost_result_free(cmdhost_result *r);

/* A fan-out's branch: a named call. */
typedef struct {
	const char *name;
	cmdhost_call call;
} cmdhost_branch;

enum { CMDHOST_SYNC_ALL = 0, CMDHOST_SYNC_ANY = 1, CMDHOST_SYNC_M_OF_N = 2 };

/* How a fan-out waits for its branches; all zero: for all of them, with
 * the host's default sync timeout, going on with what arrived when it
 * fires. */
typedef struct {
	int strategy;      /* CMDHOST_SYNC_ALL, _ANY or _M_OF_N */
	uint32_t m;        /* with CMDHOST_SYNC_M_OF_N */
	int64_t timeout_ms; /* wait time from the first arrival; 0: the host's default */
	int fail_on_timeout;
} cmdhost_sync;

/* Runs n calls at once (at most 64) and waits as sync says (NULL: all).
 * results[i] is branch i's result; free each with cmdhost_result_free.
 * 0, or the reason the invocation failed as a whole (then results[0]'s
 * message says why; a sync timeout with fail_on_timeout still fills all). */
int cmdhost_fan_out(const cmdhost_sync *sync, const cmdhost_branch *branches, size_t n, cmdhost_result *results);

/* Nanoseconds the call has left before the host cuts it; -1 when it has
 * no deadline. */
int64_t cmdhost_remaining_ns(const cmdhost_request *req);

#ifdef __cplusplus
}
#endif
#endif
