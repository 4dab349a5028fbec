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
} cmdhost_request;

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

/* Defined by the plugin: registers its commands. Called once per instance. */
void cmdhost_init(void);

/* Log levels, as the host's (Go's log/slog). */
enum { CMDHOST_DEBUG = -4, CMDHOST_INFO = 0, CMDHOST_WARN = 4, CMDHOST_ERROR = 8 };
void cmdhost_log(int level, const char *msg);

/* The operator's configuration value for key, malloc'd (free it); NULL
 * when it is not set. */
char *cmdhost_config(const char *key);

/* Results of the variable functions. */
enum {
	CMDHOST_OK = 0,
	CMDHOST_NOT_FOUND = -1,
	CMDHOST_TOO_LARGE = -2,
	CMDHOST_LIMIT = -3,
	CMDHOST_NOT_INTEGER = -5,
};
/* A plugin variable, kept by the host and shared by every instance: *value
 * is malloc'd (free it). CMDHOST_OK, CMDHOST_NOT_FOUND or an error. */
int cmdhost_var_get(const char *key, uint8_t **value, size_t *len);
int cmdhost_var_set(const char *key, const void *value, size_t len);
/* Adds delta to a decimal integer variable (absent: 0), atomically. */
int cmdhost_var_add(const char *key, int64_t delta, int64_t *sum);

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
