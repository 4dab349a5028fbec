// kit-as: the guest kit's test plugin in AssemblyScript
// (testdata/kit/README.md says what each command does;
// internal/nested/guestkit_test.go checks it).
import {
  handle, Request, Response, Options, Call, callCommand, fanOut, Sync, config, getVar, setVar, addVar,
  log, lastResult, LEVEL_INFO, RESULT_OK, state, sharedState, StateResult, SetOptions, StateItem, StateSpace,
  publish, Message, Event, PublishResult, http, httpReason, HttpFailure, HttpRequest, onMessage,
} from "../../sdk/assemblyscript/assembly/index";
export { cmdhost_abi_version, cmdhost_describe, cmdhost_handle } from "../../sdk/assemblyscript/assembly/index";

handle("kit-echo", (req: Request): Response => {
  const r = Response.ok(req.payload).withContentType(req.contentType);
  r.metadata = req.metadata;
  return r;
});

handle("kit-caller", (req: Request): Response =>
  Response.text("user=" + req.callerUser + ";client=" + req.callerClientId));

handle("kit-error", (req: Request): Response => Response.error("kit: deliberate failure"));

handle("kit-status", (req: Request): Response => {
  const p = req.payloadText();
  if (p == "400") return Response.invalidPayload("kit: bad payload");
  if (p == "415") return Response.unsupportedContentType(req.contentType);
  return Response.noContent();
});

const idem = new Options();
idem.idempotent = true;
idem.responseTtlMs = 60000;
idem.contentTypes = ["text/plain"];
idem.timeoutMs = 2000;
handle("kit-idem", (req: Request): Response => Response.ok(req.payload), idem);

handle("kit-config", (req: Request): Response => {
  const v = config(req.payloadText());
  if (v == null) return Response.error("kit: no config " + req.payloadText());
  return Response.text(v);
});

handle("kit-var", (req: Request): Response => {
  if (req.payloadText() == "add") {
    const n = addVar("n", 1);
    if (lastResult != RESULT_OK) return Response.error("kit: addVar failed: " + lastResult.toString());
    return Response.text(n.toString());
  }
  setVar("v", req.payload);
  const v = getVar("v");
  if (v == null) return Response.error("kit: the variable just set is not there");
  return Response.ok(v);
});

handle("kit-log", (req: Request): Response => {
  log(LEVEL_INFO, req.payloadText());
  return new Response();
});

handle("kit-nest", (req: Request): Response => {
  const c = new Call();
  c.command = "kit-echo";
  c.payload = req.payload;
  const r = callCommand(c);
  if (r.failure != 0 || r.status != 200) {
    return Response.error("kit: kit-echo: failure " + r.failure.toString() + ", status " + r.status.toString() + ": " + r.message);
  }
  return Response.ok(r.payload);
});

handle("kit-fan", (req: Request): Response => {
  const names = ["a", "b"];
  const calls = new Array<Call>(2);
  for (let i = 0; i < 2; i++) {
    calls[i] = new Call();
    calls[i].command = "kit-echo";
    calls[i].payload = Uint8Array.wrap(String.UTF8.encode(req.payloadText() + "-" + names[i]));
  }
  const r = fanOut(new Sync(), names, calls);
  if (r[0].failure != 0) return Response.error("kit: fan-out failed, reason " + r[0].failure.toString() + ": " + r[0].message);
  return Response.text("a=" + String.UTF8.decode(r[0].payload.buffer) + ";b=" + String.UTF8.decode(r[1].payload.buffer));
});

handle("kit-trap", (req: Request): Response => {
  unreachable();
  return new Response();
});

const deadline = new Options();
deadline.timeoutMs = 300;
let sink: i64 = 0;
handle("kit-deadline", (req: Request): Response => {
  if (req.payloadText() == "remaining") {
    const left = req.remainingNanos();
    if (left > 0 && left <= 10_000_000_000) return Response.text("ok");
    return Response.error("kit: remaining " + left.toString() + " ns");
  }
  while (true) sink++; // until the host cuts the call
  return new Response();
}, deadline);

// kit-state: one state store operation named by the payload
// (testdata/kit/README.md) and what it found.

// The reply to a state operation: ok when it succeeded, the word of a
// typed error, or an application error.
function stateReply(r: StateResult, ok: string): Response {
  switch (r) {
    case StateResult.OK: return Response.text(ok);
    case StateResult.Conflict: return Response.text("conflict");
    case StateResult.NotFound: return Response.text("missing");
    case StateResult.Denied: return Response.text("denied");
    case StateResult.TooLarge: return Response.text("too-large");
    case StateResult.Quota: return Response.text("quota");
    case StateResult.NotInteger: return Response.text("not-integer");
    default: return Response.error("kit: state result " + r.toString());
  }
}

function itemReply(it: StateItem, withVersion: bool): Response {
  if (it.result != StateResult.OK) return stateReply(it.result, "");
  return Response.text(withVersion ? it.text() + "@" + it.version.toString() : it.text());
}

// Every key that starts with prefix, page after page, joined by ",".
function listAll(space: StateSpace, prefix: string): Response {
  const all = new Array<string>();
  let page = space.list(prefix);
  while (page.result == StateResult.OK) {
    for (let i = 0; i < page.keys.length; i++) all.push(page.keys[i]);
    if (!page.more) return Response.text(all.join(","));
    page = page.next();
  }
  return stateReply(page.result, "");
}

function isNumber(s: string): bool {
  if (s.length == 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

handle("kit-state", (req: Request): Response => {
  const f = req.payloadText().split(" ");
  const op = f[0];
  const key = f.length > 1 ? f[1] : "";
  const rest = f.length > 2 ? f.slice(2).join(" ") : "";
  const own = state();
  if (op == "get") return itemReply(own.get(key), true);
  if (op == "shared-get") return itemReply(sharedState("kit").get(key), false);
  if (op == "set") return stateReply(own.setText(key, rest), "ok");
  if (op == "setget") {
    const r = own.setText(key, rest);
    return r != StateResult.OK ? stateReply(r, "") : itemReply(own.get(key), true);
  }
  if (op == "shared-set") return stateReply(sharedState("kit").setText(key, rest), "ok");
  if (op == "absent") {
    const o = new SetOptions();
    o.ifAbsent = true;
    return stateReply(own.setText(key, rest, o), "ok");
  }
  if (op == "cas" || op == "ttl" || op == "delv") {
    const sp = rest.indexOf(" ");
    const num = sp < 0 ? rest : rest.substring(0, sp);
    const v = sp < 0 ? "" : rest.substring(sp + 1);
    if (!isNumber(num)) return Response.error("kit: " + op + " wants a number: " + num);
    const n = U64.parseInt(num);
    const o = new SetOptions();
    if (op == "cas") {
      o.ifVersion = n;
      return stateReply(own.setText(key, v, o), "ok");
    }
    if (op == "ttl") {
      o.ttlMs = <i64>n;
      return stateReply(own.setText(key, v, o), "ok");
    }
    const d = own.delete(key, n);
    return stateReply(d.result, d.existed ? "1" : "0");
  }
  if (op == "add") {
    const a = own.add(key, 1);
    return stateReply(a.result, a.sum.toString());
  }
  if (op == "del") {
    const d = own.delete(key);
    return stateReply(d.result, d.existed ? "1" : "0");
  }
  if (op == "list") return listAll(own, key);
  if (op == "big") {
    const n = I32.parseInt(rest);
    const v = new Uint8Array(n);
    v.fill(0x78); // x
    return stateReply(own.set(key, v), "ok");
  }
  if (op == "fail") {
    const r = own.setText(key, "failed");
    return Response.error("kit: deliberate failure after a write (set: " + r.toString() + ")");
  }
  return Response.error("kit: unknown state operation \"" + op + "\"");
});

// kit-publish: publishes what the payload says (testdata/kit/README.md)
// and replies ok, or the error's word.
handle("kit-publish", (req: Request): Response => {
  const f = req.payloadText().split(" ");
  const payload = f.length > 1 ? f[1] : "";
  const m = new Message(f[0], Uint8Array.wrap(String.UTF8.encode(payload))).withContentType("text/plain");
  const how = f.length > 2 ? f.slice(2).join(" ") : "";
  if (how == "event") m.event = new Event("kit.event");
  if (how == "reserved") m.metadata.set("__ts", "x");
  switch (publish(m)) {
    case PublishResult.OK: return Response.text("ok");
    case PublishResult.Denied: return Response.text("denied");
    case PublishResult.TooLarge: return Response.text("too-large");
    case PublishResult.Limit: return Response.text("limit");
    case PublishResult.Invalid: return Response.text("invalid");
    default: return Response.error("kit: publish failed");
  }
});

// The line of one kit-http request, METHOD URL [BODY]: STATUS REPLY BODY,
// or WORD: MESSAGE.
function kitHttpOnce(payload: string): string {
  const f = payload.split(" ");
  const r = new HttpRequest(f[0], f[1]).withHeader("X-Kit", "as");
  if (f.length > 2) {
    const body = f.slice(2).join(" ");
    const n = body.length > 1 && body.charAt(0) == "+" && isNumber(body.substring(1)) ? I32.parseInt(body.substring(1)) : -1;
    if (n >= 0) {
      const b = new Uint8Array(n);
      b.fill(0x78); // x
      r.withBody(b);
    } else {
      r.withBody(Uint8Array.wrap(String.UTF8.encode(body)));
    }
    r.withHeader("Content-Type", "text/plain");
  }
  const resp = http(r);
  if (resp.failure != HttpFailure.None) return httpReason(resp.failure).replaceAll("_", "-") + ": " + resp.message;
  const reply = resp.header("X-Kit-Reply");
  return resp.status.toString() + " " + (reply != null ? reply : "") + " " + resp.text();
}

// kit-http: sends the requests the payload names (testdata/kit/README.md)
// and replies with their responses, or the errors' words, a line each.
handle("kit-http", (req: Request): Response => {
  let payload = req.payloadText();
  let times = 1;
  const sp = payload.indexOf(" ");
  if (payload.startsWith("x") && sp > 1 && isNumber(payload.substring(1, sp))) {
    times = I32.parseInt(payload.substring(1, sp));
    payload = payload.substring(sp + 1);
  }
  if (payload.indexOf(" ") < 0) return Response.error("kit: kit-http wants [xN] METHOD URL [BODY], not \"" + payload + "\"");
  const lines = new Array<string>();
  for (let i = 0; i < times; i++) lines.push(kitHttpOnce(payload));
  return Response.ok(Uint8Array.wrap(String.UTF8.encode(lines.join("\n")))).withContentType("text/plain");
});

// kit.device.any.all, the kit's trigger (testdata/kit/README.md), named
// after its filter: fails the attempt for the payload fail, else logs the
// message's topic, its device token and its payload.
onMessage("kit/{device}/+/#", (m: Request): string | null => {
  const device = m.topicTokens.has("device") ? m.topicTokens.get("device") : "";
  if (m.payloadText() == "fail") return "kit: deliberate failure on " + m.topic + " (device " + device + ")";
  log(LEVEL_INFO, "kit-trigger topic=" + m.topic + " device=" + device + " payload=" + m.payloadText());
  return null;
});
