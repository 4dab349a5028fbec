/* kit-c: the guest kit's test plugin in C (testdata/kit/README.md says what
 * each command does; internal/nested/guestkit_test.go checks it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdhost.h"

static int payload_is(const cmdhost_request *req, const char *s) {
	return req->payload_len == strlen(s) && memcmp(req->payload, s, req->payload_len) == 0;
}

static char *payload_str(const cmdhost_request *req) {
	char *s = malloc(req->payload_len + 1);
	memcpy(s, req->payload, req->payload_len);
	s[req->payload_len] = 0;
	return s;
}

/* Splits s in place at its first two spaces into f[0], f[1] and the rest,
 * f[2], as strings.SplitN(s, " ", 3) does; those missing are NULL. */
static void split3(char *s, const char *f[3]) {
	f[0] = s;
	f[1] = f[2] = NULL;
	char *sp = strchr(s, ' ');
	if (sp) {
		*sp = 0;
		f[1] = sp + 1;
		if ((sp = strchr(sp + 1, ' '))) {
			*sp = 0;
			f[2] = sp + 1;
		}
	}
}

static void echo(const cmdhost_request *req, cmdhost_response *resp) {
	cmdhost_reply(resp, req->payload, req->payload_len);
	cmdhost_reply_content_type(resp, req->content_type);
	for (size_t i = 0; i < req->metadata_len; i++) cmdhost_reply_metadata(resp, req->metadata[i].key, req->metadata[i].value);
}

static void caller(const cmdhost_request *req, cmdhost_response *resp) {
	size_t n = strlen(req->caller_user) + strlen(req->caller_client_id) + sizeof "user=;client=";
	char *s = malloc(n);
	snprintf(s, n, "user=%s;client=%s", req->caller_user, req->caller_client_id);
	cmdhost_reply(resp, s, strlen(s));
	cmdhost_reply_content_type(resp, "text/plain");
	free(s);
}

static void fail(const cmdhost_request *req, cmdhost_response *resp) {
	(void)req;
	cmdhost_fail(resp, "kit: deliberate failure");
}

static void status(const cmdhost_request *req, cmdhost_response *resp) {
	if (payload_is(req, "400")) {
		cmdhost_invalid_payload(resp, "kit: bad payload");
	} else if (payload_is(req, "415")) {
		cmdhost_unsupported_content_type(resp, req->content_type);
	} else {
		cmdhost_reply_no_content(resp);
	}
}

static void idem(const cmdhost_request *req, cmdhost_response *resp) { cmdhost_reply(resp, req->payload, req->payload_len); }

static void config(const cmdhost_request *req, cmdhost_response *resp) {
	char *key = payload_str(req);
	char *v = cmdhost_config(key);
	if (v) {
		cmdhost_reply_text(resp, v);
		free(v);
	} else {
		char msg[300];
		snprintf(msg, sizeof msg, "kit: no config %s", key);
		cmdhost_fail(resp, msg);
	}
	free(key);
}

static void var(const cmdhost_request *req, cmdhost_response *resp) {
	if (payload_is(req, "add")) {
		int64_t n;
		if (cmdhost_var_add("n", 1, &n) != CMDHOST_OK) {
			cmdhost_fail(resp, "kit: var_add failed");
			return;
		}
		char s[32];
		snprintf(s, sizeof s, "%lld", (long long)n);
		cmdhost_reply_text(resp, s);
		return;
	}
	uint8_t *v;
	size_t len;
	if (cmdhost_var_set("v", req->payload, req->payload_len) != CMDHOST_OK || cmdhost_var_get("v", &v, &len) != CMDHOST_OK) {
		cmdhost_fail(resp, "kit: the variable just set is not there");
		return;
	}
	cmdhost_reply(resp, v, len);
	free(v);
}

static void logit(const cmdhost_request *req, cmdhost_response *resp) {
	char *s = payload_str(req);
	cmdhost_log(CMDHOST_INFO, s);
	free(s);
	cmdhost_reply(resp, "", 0);
}

static void nest(const cmdhost_request *req, cmdhost_response *resp) {
	cmdhost_call call = {.command = "kit-echo", .payload = req->payload, .payload_len = req->payload_len};
	cmdhost_result r;
	int failed = cmdhost_call_command(&call, &r);
	if (failed || r.status != 200) {
		char msg[300];
		snprintf(msg, sizeof msg, "kit: kit-echo: reason %d, status %u: %s", failed, r.status, r.message ? r.message : "");
		cmdhost_fail(resp, msg);
	} else {
		cmdhost_reply(resp, r.payload, r.payload_len);
	}
	cmdhost_result_free(&r);
}

static void fan(const cmdhost_request *req, cmdhost_response *resp) {
	char *p = payload_str(req);
	char pa[300], pb[300];
	snprintf(pa, sizeof pa, "%s-a", p);
	snprintf(pb, sizeof pb, "%s-b", p);
	free(p);
	cmdhost_branch branches[2] = {
		{"a", {.command = "kit-echo", .payload = pa, .payload_len = strlen(pa)}},
		{"b", {.command = "kit-echo", .payload = pb, .payload_len = strlen(pb)}},
	};
	cmdhost_result r[2];
	int failed = cmdhost_fan_out(NULL, branches, 2, r);
	char out[700];
	if (failed) {
		snprintf(out, sizeof out, "kit: fan-out failed, reason %d: %s", failed, r[0].message);
		cmdhost_fail(resp, out);
	} else {
		snprintf(out, sizeof out, "a=%.*s;b=%.*s", (int)r[0].payload_len, (const char *)r[0].payload, (int)r[1].payload_len, (const char *)r[1].payload);
		cmdhost_reply_text(resp, out);
	}
	cmdhost_result_free(&r[0]);
	cmdhost_result_free(&r[1]);
}

static void trap(const cmdhost_request *req, cmdhost_response *resp) {
	(void)req;
	(void)resp;
	__builtin_trap();
}

static void deadline(const cmdhost_request *req, cmdhost_response *resp) {
	if (payload_is(req, "remaining")) {
		int64_t left = cmdhost_remaining_ns(req);
		if (left > 0 && left <= 10000000000LL) {
			cmdhost_reply_text(resp, "ok");
		} else {
			char msg[64];
			snprintf(msg, sizeof msg, "kit: remaining %lld ns", (long long)left);
			cmdhost_fail(resp, msg);
		}
		return;
	}
	volatile unsigned long n = 0;
	for (;;) n++; /* until the host cuts the call */
}

/* Replies to a state operation: with ok when it succeeded, with the word
 * of a typed error, or with an application error. */
static void state_reply(cmdhost_response *resp, int r, const char *ok) {
	const char *word = NULL;
	switch (r) {
	case CMDHOST_OK: word = ok; break;
	case CMDHOST_CONFLICT: word = "conflict"; break;
	case CMDHOST_NOT_FOUND: word = "missing"; break;
	case CMDHOST_DENIED: word = "denied"; break;
	case CMDHOST_TOO_LARGE: word = "too-large"; break;
	case CMDHOST_LIMIT: word = "quota"; break;
	case CMDHOST_NOT_INTEGER: word = "not-integer"; break;
	default: break;
	}
	if (word) {
		cmdhost_reply_text(resp, word);
		return;
	}
	char msg[64];
	snprintf(msg, sizeof msg, "kit: state result %d", r);
	cmdhost_fail(resp, msg);
}

/* Replies V@VERSION, or with only V, as get reads key in ns. */
static void state_get(cmdhost_response *resp, const char *ns, const char *key, int with_version) {
	uint8_t *v;
	size_t len;
	uint64_t version;
	int r = cmdhost_state_get(ns, key, &v, &len, &version);
	if (r != CMDHOST_OK) {
		state_reply(resp, r, "");
		return;
	}
	char *out = malloc(len + 24);
	memcpy(out, v, len);
	size_t n = len + (with_version ? (size_t)snprintf(out + len, 24, "@%llu", (unsigned long long)version) : 0);
	cmdhost_reply(resp, out, n);
	cmdhost_reply_content_type(resp, "text/plain");
	free(out);
	free(v);
}

/* Replies with every key that starts with prefix, page after page, joined
 * by ",". */
static void state_list(cmdhost_response *resp, const char *prefix) {
	char *all = NULL;
	size_t len = 0;
	cmdhost_state_page page = {0};
	int r = cmdhost_state_list(NULL, prefix, NULL, 0, &page);
	for (; r == CMDHOST_OK; r = cmdhost_state_list(NULL, prefix, page.last, page.last_len, &page)) {
		size_t n;
		for (const char *k; (k = cmdhost_state_next(&page, &n));) {
			all = realloc(all, len + n + 1);
			if (len) all[len++] = ',';
			memcpy(all + len, k, n);
			len += n;
		}
		if (!page.more) break;
	}
	cmdhost_state_page_free(&page);
	if (r == CMDHOST_OK) {
		cmdhost_reply(resp, all ? all : "", len);
	} else {
		state_reply(resp, r, "");
	}
	free(all);
}

/* kit-state: one state store operation named by the payload
 * (testdata/kit/README.md) and what it found. */
static void kit_state(const cmdhost_request *req, cmdhost_response *resp) {
	char *p = payload_str(req);
	const char *f[3];
	split3(p, f);
	const char *op = f[0], *key = f[1] ? f[1] : "", *rest = f[2] ? f[2] : "";
	char msg[300];
	if (strcmp(op, "get") == 0) {
		state_get(resp, NULL, key, 1);
	} else if (strcmp(op, "shared-get") == 0) {
		state_get(resp, "kit", key, 0);
	} else if (strcmp(op, "set") == 0) {
		state_reply(resp, cmdhost_state_set(NULL, key, rest, strlen(rest), NULL), "ok");
	} else if (strcmp(op, "setget") == 0) {
		int r = cmdhost_state_set(NULL, key, rest, strlen(rest), NULL);
		if (r == CMDHOST_OK) {
			state_get(resp, NULL, key, 1);
		} else {
			state_reply(resp, r, "");
		}
	} else if (strcmp(op, "shared-set") == 0) {
		state_reply(resp, cmdhost_state_set("kit", key, rest, strlen(rest), NULL), "ok");
	} else if (strcmp(op, "absent") == 0) {
		state_reply(resp, cmdhost_state_set(NULL, key, rest, strlen(rest), &(cmdhost_state_options){.if_absent = 1}), "ok");
	} else if (strcmp(op, "cas") == 0 || strcmp(op, "ttl") == 0 || strcmp(op, "delv") == 0) {
		char *end;
		unsigned long long n = strtoull(rest, &end, 10);
		if (*rest < '0' || *rest > '9' || (*end && *end != ' ')) {
			snprintf(msg, sizeof msg, "kit: %s wants a number: %s", op, rest);
			cmdhost_fail(resp, msg);
		} else {
			const char *v = *end ? end + 1 : "";
			if (strcmp(op, "cas") == 0) {
				state_reply(resp, cmdhost_state_set(NULL, key, v, strlen(v), &(cmdhost_state_options){.if_version = n}), "ok");
			} else if (strcmp(op, "ttl") == 0) {
				state_reply(resp, cmdhost_state_set(NULL, key, v, strlen(v), &(cmdhost_state_options){.ttl_ms = (int64_t)n}), "ok");
			} else {
				int existed = 0;
				int r = cmdhost_state_delete(NULL, key, n, &existed);
				state_reply(resp, r, existed ? "1" : "0");
			}
		}
	} else if (strcmp(op, "add") == 0) {
		int64_t sum = 0;
		int r = cmdhost_state_add(NULL, key, 1, &sum);
		snprintf(msg, sizeof msg, "%lld", (long long)sum);
		state_reply(resp, r, msg);
	} else if (strcmp(op, "del") == 0) {
		int existed = 0;
		int r = cmdhost_state_delete(NULL, key, 0, &existed);
		state_reply(resp, r, existed ? "1" : "0");
	} else if (strcmp(op, "list") == 0) {
		state_list(resp, key);
	} else if (strcmp(op, "big") == 0) {
		size_t n = strtoul(rest, NULL, 10);
		char *v = malloc(n ? n : 1);
		memset(v, 'x', n);
		state_reply(resp, cmdhost_state_set(NULL, key, v, n, NULL), "ok");
		free(v);
	} else if (strcmp(op, "fail") == 0) {
		int r = cmdhost_state_set(NULL, key, "failed", 6, NULL);
		snprintf(msg, sizeof msg, "kit: deliberate failure after a write (set: %d)", r);
		cmdhost_fail(resp, msg);
	} else {
		snprintf(msg, sizeof msg, "kit: unknown state operation \"%.200s\"", op);
		cmdhost_fail(resp, msg);
	}
	free(p);
}

/* kit-publish: publishes what the payload says (testdata/kit/README.md)
 * and replies ok, or the error's word. */
static void kit_publish(const cmdhost_request *req, cmdhost_response *resp) {
	char *p = payload_str(req);
	const char *f[3];
	split3(p, f);
	const char *payload = f[1] ? f[1] : "";
	cmdhost_message m = {.topic = f[0], .payload = payload, .payload_len = strlen(payload), .content_type = "text/plain"};
	cmdhost_event event = {.type = "kit.event"};
	cmdhost_entry reserved = {"__ts", "x"};
	if (f[2] && strcmp(f[2], "event") == 0) m.event = &event;
	if (f[2] && strcmp(f[2], "reserved") == 0) {
		m.metadata = &reserved;
		m.metadata_len = 1;
	}
	int r = cmdhost_publish(&m);
	free(p);
	const char *word = NULL;
	switch (r) {
	case CMDHOST_OK: word = "ok"; break;
	case CMDHOST_DENIED: word = "denied"; break;
	case CMDHOST_TOO_LARGE: word = "too-large"; break;
	case CMDHOST_LIMIT: word = "limit"; break;
	case CMDHOST_INVALID: word = "invalid"; break;
	default: break;
	}
	if (word) {
		cmdhost_reply_text(resp, word);
		cmdhost_reply_content_type(resp, "text/plain");
		return;
	}
	char msg[64];
	snprintf(msg, sizeof msg, "kit: publish result %d", r);
	cmdhost_fail(resp, msg);
}

/* Appends the n bytes at p to the buffer *b of *len bytes. */
static void append(char **b, size_t *len, const void *p, size_t n) {
	*b = realloc(*b, *len + n + 1);
	memcpy(*b + *len, p, n);
	*len += n;
}

/* Sends the request of a kit-http payload, METHOD URL [BODY], and appends
 * its line to the reply: STATUS REPLY BODY, or WORD: MESSAGE. */
static void kit_http_once(const char *payload, char **out, size_t *len) {
	char *p = strdup(payload);
	const char *f[3];
	split3(p, f);
	cmdhost_entry headers[] = {{"X-Kit", "c"}, {"Content-Type", "text/plain"}};
	cmdhost_http_request r = {.method = f[0], .url = f[1] ? f[1] : "", .headers = headers, .headers_len = 1};
	char *body = NULL;
	if (f[2]) {
		char *end = NULL;
		unsigned long n = f[2][0] == '+' ? strtoul(f[2] + 1, &end, 10) : 0;
		if (end && end > f[2] + 1 && !*end) { /* +N: N bytes of x */
			body = malloc(n ? n : 1);
			memset(body, 'x', n);
			r.body = body;
			r.body_len = n;
		} else {
			r.body = f[2];
			r.body_len = strlen(f[2]);
		}
		r.headers_len = 2;
	}
	cmdhost_http_response resp;
	char line[300];
	if (cmdhost_http(&r, &resp) == 0) {
		const char *reply = cmdhost_http_header(&resp, "X-Kit-Reply");
		snprintf(line, sizeof line, "%u %s ", resp.status, reply ? reply : "");
		append(out, len, line, strlen(line));
		append(out, len, resp.body, resp.body_len);
	} else {
		snprintf(line, sizeof line, "%s: ", cmdhost_http_reason(resp.failure));
		for (char *c = line; *c; c++) {
			if (*c == '_') *c = '-';
		}
		append(out, len, line, strlen(line));
		append(out, len, resp.message, strlen(resp.message));
	}
	cmdhost_http_response_free(&resp);
	free(body);
	free(p);
}

/* kit-http: sends the requests the payload names (testdata/kit/README.md)
 * and replies with their responses, or the errors' words, a line each. */
static void kit_http(const cmdhost_request *req, cmdhost_response *resp) {
	char *p = payload_str(req);
	const char *payload = p;
	long times = 1;
	char *sp = strchr(p, ' ');
	if (p[0] == 'x' && sp) {
		char *end;
		long n = strtol(p + 1, &end, 10);
		if (end == sp && end > p + 1) {
			payload = sp + 1;
			times = n;
		}
	}
	if (!strchr(payload, ' ')) {
		char msg[300];
		snprintf(msg, sizeof msg, "kit: kit-http wants [xN] METHOD URL [BODY], not \"%.200s\"", payload);
		cmdhost_fail(resp, msg);
		free(p);
		return;
	}
	char *out = NULL;
	size_t len = 0;
	for (long i = 0; i < times; i++) {
		if (i) append(&out, &len, "\n", 1);
		kit_http_once(payload, &out, &len);
	}
	cmdhost_reply(resp, out ? out : "", len);
	cmdhost_reply_content_type(resp, "text/plain");
	free(out);
	free(p);
}

/* kit.device.any.all, the kit's trigger (testdata/kit/README.md): fails
 * the attempt for the payload fail, else logs the message's topic, its
 * device token and its payload. */
static void kit_trigger(const cmdhost_request *m, cmdhost_response *resp) {
	const char *device = cmdhost_topic_token(m, "device");
	char *p = payload_str(m);
	size_t n = strlen(m->topic) + (device ? strlen(device) : 0) + strlen(p) + 64;
	char *line = malloc(n);
	if (strcmp(p, "fail") == 0) {
		snprintf(line, n, "kit: deliberate failure on %s (device %s)", m->topic, device ? device : "");
		cmdhost_fail(resp, line);
	} else {
		snprintf(line, n, "kit-trigger topic=%s device=%s payload=%s", m->topic, device ? device : "", p);
		cmdhost_log(CMDHOST_INFO, line);
	}
	free(line);
	free(p);
}

static const char *const text_plain[] = {"text/plain", NULL};

void cmdhost_init(void) {
	cmdhost_command("kit-caller", caller, NULL);
	cmdhost_command("kit-echo", echo, NULL);
	cmdhost_command("kit-error", fail, NULL);
	cmdhost_command("kit-status", status, NULL);
	cmdhost_command("kit-idem", idem, &(cmdhost_options){.idempotent = 1, .response_ttl_ms = 60000, .content_types = text_plain, .timeout_ms = 2000});
	cmdhost_command("kit-config", config, NULL);
	cmdhost_command("kit-var", var, NULL);
	cmdhost_command("kit-log", logit, NULL);
	cmdhost_command("kit-nest", nest, NULL);
	cmdhost_command("kit-fan", fan, NULL);
	cmdhost_command("kit-trap", trap, NULL);
	cmdhost_command("kit-deadline", deadline, &(cmdhost_options){.timeout_ms = 300});
	cmdhost_command("kit-state", kit_state, NULL);
	cmdhost_command("kit-publish", kit_publish, NULL);
	cmdhost_command("kit-http", kit_http, NULL);
	cmdhost_on_message("kit/{device}/+/#", NULL, kit_trigger, NULL); /* named after its filter: kit.device.any.all */
}
