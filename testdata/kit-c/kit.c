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
}
