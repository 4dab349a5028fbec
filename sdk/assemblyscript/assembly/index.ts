// cmdhost guest SDK for AssemblyScript: command handlers that cmdhost
// serves over MQTT. A thin layer over the ABI (abi/ABI.md in the cmdhost
// repository): the envelope codec, the host imports and the exports the
// host calls, which the plugin's entry file re-exports:
//
//   import { handle, Request, Response } from "cmdhost-sdk/assembly";
//   export { cmdhost_abi_version, cmdhost_describe, cmdhost_handle } from "cmdhost-sdk/assembly";
//
//   handle("greet", (req: Request): Response => Response.text("hello " + req.payloadText()));
//
// Build (sdk/assemblyscript/README.md): asc plugin.ts -o plugin.wasm -O
//   --runtime incremental --exportStart _initialize --use abort=
// The host provides no `env` module: `--use abort=` leaves a failed
// assertion or bounds check a trap, which the host reports.

// ---- host imports (module "cmdhost", ABI section 5) --------------------

@external("cmdhost", "describe") declare function host_describe(ptr: usize, len: i32): i32;
@external("cmdhost", "request_len") declare function host_request_len(): i32;
@external("cmdhost", "request_read") declare function host_request_read(ptr: usize, cap: i32): i32;
@external("cmdhost", "response_write") declare function host_response_write(ptr: usize, len: i32): i32;
@external("cmdhost", "log") declare function host_log(level: i32, ptr: usize, len: i32): void;
@external("cmdhost", "config_get") declare function host_config_get(k: usize, kn: i32, buf: usize, cap: i32): i32;
@external("cmdhost", "var_get") declare function host_var_get(k: usize, kn: i32, buf: usize, cap: i32): i32;
@external("cmdhost", "var_set") declare function host_var_set(k: usize, kn: i32, v: usize, vn: i32): i32;
@external("cmdhost", "var_add") declare function host_var_add(k: usize, kn: i32, delta: i64, out: usize): i32;
@external("cmdhost", "invoke") declare function host_invoke(ptr: usize, len: i32): i32;
@external("cmdhost", "invoke_result_read") declare function host_invoke_result_read(ptr: usize, cap: i32): i32;
@external("cmdhost", "state_get") declare function host_state_get(ns: usize, nsn: i32, k: usize, kn: i32, buf: usize, cap: i32, version: usize): i32;
@external("cmdhost", "state_set") declare function host_state_set(ns: usize, nsn: i32, k: usize, kn: i32, v: usize, vn: i32, ttlMs: i64, ifVersion: u64, flags: i32): i32;
@external("cmdhost", "state_delete") declare function host_state_delete(ns: usize, nsn: i32, k: usize, kn: i32, ifVersion: u64): i32;
@external("cmdhost", "state_add") declare function host_state_add(ns: usize, nsn: i32, k: usize, kn: i32, delta: i64, out: usize): i32;
@external("cmdhost", "state_list") declare function host_state_list(ns: usize, nsn: i32, p: usize, pn: i32, a: usize, an: i32, buf: usize, cap: i32): i32;
@external("cmdhost", "publish") declare function host_publish(ptr: usize, len: i32): i32;
@external("cmdhost", "http_request") declare function host_http_request(ptr: usize, len: i32): i32;
@external("cmdhost", "http_result_read") declare function host_http_result_read(ptr: usize, cap: i32): i32;
@external("wasi_snapshot_preview1", "clock_time_get") declare function clock_time_get(id: u32, precision: u64, out: usize): u16;

export const ABI_VERSION: i32 = 1;

// Result codes (ABI section 5).
export const RESULT_OK: i32 = 0;
export const RESULT_NOT_FOUND: i32 = -1;
export const RESULT_TOO_LARGE: i32 = -2;
export const RESULT_LIMIT: i32 = -3;
export const RESULT_NOT_INTEGER: i32 = -5;

// ---- the envelope (ABI section 7) --------------------------------------

class Writer {
  buf: Uint8Array = new Uint8Array(256);
  len: i32 = 0;

  private grow(n: i32): void {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }
  header(tag: u8, n: i32): void {
    this.grow(5 + n);
    this.buf[this.len] = tag;
    store<u32>(this.buf.dataStart + this.len + 1, <u32>n);
    this.len += 5;
  }
  bytes(tag: u8, v: Uint8Array): void {
    this.header(tag, v.length);
    this.buf.set(v, this.len);
    this.len += v.length;
  }
  string(tag: u8, s: string): void {
    this.bytes(tag, Uint8Array.wrap(String.UTF8.encode(s)));
  }
  u8(tag: u8, v: u8): void {
    this.header(tag, 1);
    this.buf[this.len++] = v;
  }
  u32(tag: u8, v: u32): void {
    this.header(tag, 4);
    store<u32>(this.buf.dataStart + this.len, v);
    this.len += 4;
  }
  i64(tag: u8, v: i64): void {
    this.header(tag, 8);
    store<i64>(this.buf.dataStart + this.len, v);
    this.len += 8;
  }
  entry(tag: u8, k: string, v: string): void {
    const kb = Uint8Array.wrap(String.UTF8.encode(k));
    const vb = Uint8Array.wrap(String.UTF8.encode(v));
    this.header(tag, 4 + kb.length + vb.length);
    store<u32>(this.buf.dataStart + this.len, <u32>kb.length);
    this.buf.set(kb, this.len + 4);
    this.buf.set(vb, this.len + 4 + kb.length);
    this.len += 4 + kb.length + vb.length;
  }
  map(tag: u8, m: Map<string, string>): void {
    const keys = m.keys();
    for (let i = 0; i < keys.length; i++) this.entry(tag, keys[i], m.get(keys[i]));
  }
  finish(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }
  reset(): void {
    this.len = 0;
  }
}

// The request is read into reqBuf and the response encoded into respOut,
// both kept across calls: the host copies at once, and the decoder copies
// what it keeps. Allocating fewer objects per call is what makes a call
// cheap under AssemblyScript's GC.
let reqBuf = new Uint8Array(1024);
const respOut = new Writer();

// A record of an envelope.
class Record {
  constructor(public tag: u8, public value: Uint8Array) {}
}

// The records of an envelope; null when it is malformed.
function records(b: Uint8Array): Record[] | null {
  const out = new Array<Record>();
  let p = 0;
  while (p < b.length) {
    if (b.length - p < 5) return null;
    const n = <i32>load<u32>(b.dataStart + p + 1);
    if (n < 0 || n > b.length - p - 5) return null;
    out.push(new Record(b[p], b.subarray(p + 5, p + 5 + n)));
    p += 5 + n;
  }
  return out;
}

function text(v: Uint8Array): string {
  return String.UTF8.decodeUnsafe(v.dataStart, <usize>v.length);
}

// ---- requests and responses (ABI sections 8 and 9) ---------------------

// One request, as the host hands it over.
export class Request {
  command: string = "";
  payload: Uint8Array = new Uint8Array(0);
  contentType: string = "";
  format: u8 = 0;
  private _metadata: Map<string, string> | null = null;
  private _topicTokens: Map<string, string> | null = null;
  invokerId: string = "";
  correlationId: Uint8Array = new Uint8Array(0);
  hasDeadline: bool = false;
  deadlineUnixNanos: i64 = 0;
  executorId: string = "";
  attempt: u32 = 1;
  // The verified caller (ABI section 8, tags 12 and 13): the user name and
  // client id the host knows sent the request, "" when it knows none.
  // Unlike invokerId, which the invoker wrote, no client chooses them.
  callerUser: string = "";
  callerClientId: string = "";
  // The topic a trigger's message came on (ABI section 20; the values of
  // its filter's {token} levels are in topicTokens); "" for a command's
  // request.
  topic: string = "";

  // The invoker's user properties, the protocol's removed (made on first
  // use: most requests have none).
  get metadata(): Map<string, string> {
    if (this._metadata == null) this._metadata = new Map<string, string>();
    return this._metadata!;
  }
  set metadata(m: Map<string, string>) {
    this._metadata = m;
  }
  // The values of the topic pattern's {token} levels.
  get topicTokens(): Map<string, string> {
    if (this._topicTokens == null) this._topicTokens = new Map<string, string>();
    return this._topicTokens!;
  }

  // The payload as UTF-8 text.
  payloadText(): string {
    return text(this.payload);
  }

  // Nanoseconds the call has left before the host cuts it; -1 without a
  // deadline.
  remainingNanos(): i64 {
    if (!this.hasDeadline) return -1;
    const left = this.deadlineUnixNanos - nowUnixNanos();
    return left > 0 ? left : 0;
  }
}

function nowUnixNanos(): i64 {
  const out = memory.data(8);
  clock_time_get(0, 1, out);
  return load<i64>(out);
}

// decodeRequest decodes in place: one walk over the records, with no
// object per record (the GC's work is most of a small call's cost).
function decodeRequest(b: Uint8Array): Request | null {
  const r = new Request();
  const base = b.dataStart;
  const len = b.length;
  let p = 0;
  while (p < len) {
    if (len - p < 5) return null;
    const tag = load<u8>(base + p);
    const n = <i32>load<u32>(base + p + 1);
    if (n < 0 || n > len - p - 5) return null;
    const at = base + p + 5;
    switch (tag) {
      case 1: r.command = String.UTF8.decodeUnsafe(at, n); break;
      case 2: r.payload = b.slice(p + 5, p + 5 + n); break;
      case 3: r.contentType = String.UTF8.decodeUnsafe(at, n); break;
      case 4: if (n != 1) return null; r.format = load<u8>(at); break;
      case 5: if (!putEntryAt(r.metadata, at, n)) return null; break; // made only now
      case 6: if (!putEntryAt(r.topicTokens, at, n)) return null; break;
      case 7: r.invokerId = String.UTF8.decodeUnsafe(at, n); break;
      case 8: r.correlationId = b.slice(p + 5, p + 5 + n); break;
      case 9: if (n != 8) return null; r.hasDeadline = true; r.deadlineUnixNanos = load<i64>(at); break;
      case 10: r.executorId = String.UTF8.decodeUnsafe(at, n); break;
      case 11: if (n != 4) return null; r.attempt = load<u32>(at); break;
      case 12: r.callerUser = String.UTF8.decodeUnsafe(at, n); break;
      case 13: r.callerClientId = String.UTF8.decodeUnsafe(at, n); break;
      case 14: r.topic = String.UTF8.decodeUnsafe(at, n); break;
      default: break; // a later minor version's: skipped
    }
    p += 5 + n;
  }
  return r;
}

// putEntryAt adds the map entry of n bytes at at to m.
function putEntryAt(m: Map<string, string>, at: usize, n: i32): bool {
  if (n < 4) return false;
  const k = <i32>load<u32>(at);
  if (k < 0 || k > n - 4) return false;
  m.set(String.UTF8.decodeUnsafe(at + 4, k), String.UTF8.decodeUnsafe(at + 4 + k, n - 4 - k));
  return true;
}

// A reply: 200 unless built otherwise.
export class Response {
  status: u32 = 0;
  appError: bool = false;
  message: string = "";
  propName: string = "";
  propValue: string = "";
  payload: Uint8Array = new Uint8Array(0);
  contentType: string = "";
  format: u8 = 0;
  private _metadata: Map<string, string> | null = null;
  // How long this reply may be reused; -1: the command's declared TTL;
  // 0: not at all.
  ttlMs: i64 = -1;

  // User properties to add to the reply (made on first use).
  get metadata(): Map<string, string> {
    if (this._metadata == null) this._metadata = new Map<string, string>();
    return this._metadata!;
  }
  set metadata(m: Map<string, string>) {
    this._metadata = m;
  }
  hasMetadata(): bool {
    return this._metadata != null && this._metadata!.size > 0;
  }

  // A 200 reply with payload.
  static ok(payload: Uint8Array): Response {
    const r = new Response();
    r.payload = payload;
    return r;
  }
  // A 200 reply with UTF-8 text, content type text/plain.
  static text(s: string): Response {
    const r = Response.ok(Uint8Array.wrap(String.UTF8.encode(s)));
    r.contentType = "text/plain";
    r.format = 1;
    return r;
  }
  // 204: no payload.
  static noContent(): Response {
    const r = new Response();
    r.status = 204;
    return r;
  }
  // An application error: 500, the handler ran and failed.
  static error(message: string): Response {
    const r = new Response();
    r.appError = true;
    r.message = message;
    return r;
  }
  // 400: the payload is invalid.
  static invalidPayload(message: string): Response {
    const r = new Response();
    r.status = 400;
    r.message = message;
    return r;
  }
  // 415: the request's content type is not one the command takes.
  static unsupportedContentType(contentType: string): Response {
    const r = new Response();
    r.status = 415;
    r.message = "unsupported content type";
    r.propName = "Content Type";
    r.propValue = contentType;
    return r;
  }
  withContentType(ct: string): Response {
    this.contentType = ct;
    return this;
  }
  withMetadata(key: string, value: string): Response {
    this.metadata.set(key, value);
    return this;
  }
}

function encodeResponse(r: Response, w: Writer): void {
  w.reset();
  const failed = r.appError || r.status >= 400;
  if (r.appError) w.u8(2, 1);
  else if (r.status != 0) w.u32(1, r.status);
  if (r.message.length) w.string(3, r.message);
  if (r.propName.length) {
    w.string(4, r.propName);
    w.string(5, r.propValue);
  }
  if (!failed) {
    if (r.status != 204 && r.payload.length) w.bytes(6, r.payload);
    if (r.contentType.length) w.string(7, r.contentType);
    if (r.format != 0 && r.status != 204) w.u8(8, r.format);
    if (r.hasMetadata()) w.map(9, r.metadata);
    if (r.ttlMs >= 0) w.i64(10, r.ttlMs);
  }
}

// ---- commands and the exports (ABI section 3) --------------------------

// A command's settings (ABI section 10).
export class Options {
  idempotent: bool = false;
  responseTtlMs: i64 = 0; // idempotent commands only
  contentTypes: string[] = []; // none: any
  timeoutMs: i64 = 0; // 0: the host's default
  topic: string = ""; // "": rpc/{executorId}/{commandName}
}

// A trigger's handler (onMessage): one message in. null: it is handled
// (the host commits what the call wrote and published, and acknowledges
// the message); a string fails this attempt, an application error with
// that message (so do a trap and the deadline): the host runs it again, up
// to the trigger's attempts, then drops the message.
export type MessageHandler = (msg: Request) => string | null;

class Command {
  handler: ((req: Request) => Response) | null = null;
  onMessage: MessageHandler | null = null;
  trigger: string = ""; // a trigger's filter; "": a command

  constructor(public name: string, public opts: Options) {}
}

const commands = new Array<Command>();

// Registers a command; call it from the plugin's top level.
export function handle(name: string, handler: (req: Request) => Response, opts: Options | null = null): void {
  const c = new Command(name, opts != null ? opts : new Options());
  c.handler = handler;
  commands.push(c);
}

// Registers a trigger (ABI section 20); call it from the plugin's top
// level. handler runs for each message published on the topic filter,
// whose levels are literal, a {token} (any one level; its value in the
// message's topicTokens), + (any one level) or, last, # (any levels); the
// message's topic is in its topic. name "": the trigger is named after its
// filter (triggerName). The host subscribes only when the plugin's
// operator file confirms it by name ("triggers": {"NAME": {}}), and never
// to its own topics (a first level of rpc, cmdhost, clients, statestore,
// or one starting with $). opts: timeoutMs, idempotent and contentTypes
// apply as to a command; a trigger has no topic and no responseTtlMs.
export function onMessage(filter: string, handler: MessageHandler, name: string = "", opts: Options | null = null): void {
  const c = new Command(name.length ? name : triggerName(filter), opts != null ? opts : new Options());
  c.onMessage = handler;
  c.trigger = filter;
  commands.push(c);
}

// The name a trigger on filter has when onMessage is given none: the
// filter's levels joined with ".", a {token} level giving its name, +
// "any" and # "all" ("sensors/{device}/temp" is "sensors.device.temp").
export function triggerName(filter: string): string {
  const levels = filter.split("/");
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i];
    if (l == "+") levels[i] = "any";
    else if (l == "#") levels[i] = "all";
    else if (l.length >= 2 && l.startsWith("{") && l.endsWith("}")) levels[i] = l.substring(1, l.length - 1);
  }
  return levels.join(".");
}

export function cmdhost_abi_version(): i32 {
  return ABI_VERSION;
}

export function cmdhost_describe(): i32 {
  const d = new Writer();
  d.u32(1, ABI_VERSION);
  for (let i = 0; i < commands.length; i++) {
    const c = commands[i];
    const w = new Writer();
    w.string(1, c.name);
    if (c.opts.idempotent) w.u8(2, 1);
    if (c.opts.responseTtlMs) w.i64(3, c.opts.responseTtlMs);
    for (let j = 0; j < c.opts.contentTypes.length; j++) w.string(4, c.opts.contentTypes[j]);
    if (c.opts.timeoutMs) w.i64(5, c.opts.timeoutMs);
    if (c.opts.topic.length) w.string(6, c.opts.topic);
    if (c.trigger.length) w.string(7, c.trigger);
    d.bytes(2, w.finish());
  }
  const b = d.finish();
  return host_describe(b.dataStart, b.length) == 0 ? 0 : 1;
}

export function cmdhost_handle(): i32 {
  const n = host_request_len();
  if (n < 0) return 1;
  if (reqBuf.length < n) reqBuf = new Uint8Array(n);
  if (host_request_read(reqBuf.dataStart, n) != n) return 2;
  const req = decodeRequest(reqBuf.subarray(0, n));
  if (req == null) {
    log(LEVEL_ERROR, "cmdhost sdk: the request does not decode");
    return 2;
  }
  let resp: Response | null = null;
  for (let i = 0; i < commands.length; i++) {
    if (commands[i].name != req.command) continue;
    const h = commands[i].handler;
    const m = commands[i].onMessage;
    if (h != null) {
      resp = h(req);
    } else if (m != null) { // a trigger: a handled message is a 204
      const failure = m(req);
      resp = failure != null ? Response.error(failure) : Response.noContent();
    }
    break;
  }
  if (resp == null) resp = Response.error("this module serves no command " + req.command);
  encodeResponse(resp, respOut);
  const r = host_response_write(respOut.buf.dataStart, respOut.len);
  if (r != 0) {
    log(LEVEL_ERROR, r == RESULT_TOO_LARGE
      ? "response refused by the host: the response of " + respOut.len.toString() + " bytes is over the host's response size bound (serve --max-response-bytes, operator maxResponseBytes)"
      : "response refused by the host: result " + r.toString() + " (a metadata key starting with __, a payload with 204, or text that is not UTF-8)");
    return 4;
  }
  return 0;
}

// ---- log, config, variables --------------------------------------------

export const LEVEL_DEBUG: i32 = -4;
export const LEVEL_INFO: i32 = 0;
export const LEVEL_WARN: i32 = 4;
export const LEVEL_ERROR: i32 = 8;

// Writes one line to the host's log, attributed to the plugin.
export function log(level: i32, msg: string): void {
  const b = Uint8Array.wrap(String.UTF8.encode(msg));
  host_log(level, b.dataStart, b.length);
}

function utf8(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}

// Reads a value with get, growing the buffer once; null when the key is
// not set or the call failed (lastResult says which).
function readSized(key: string, get: (k: usize, kn: i32, buf: usize, cap: i32) => i32): Uint8Array | null {
  const k = utf8(key);
  let buf = new Uint8Array(256);
  for (let i = 0; i < 2; i++) {
    const n = get(k.dataStart, k.length, buf.dataStart, buf.length);
    lastResult = n < 0 ? n : RESULT_OK;
    if (n < 0) return null;
    if (n <= buf.length) return buf.slice(0, n);
    buf = new Uint8Array(n);
  }
  return null;
}

// The result code of the last config or variable call: RESULT_OK,
// RESULT_NOT_FOUND, RESULT_TOO_LARGE, RESULT_LIMIT or RESULT_NOT_INTEGER.
export let lastResult: i32 = 0;

// The operator's configuration value for key; null when it is not set.
export function config(key: string): string | null {
  const v = readSized(key, (k: usize, kn: i32, buf: usize, cap: i32): i32 => host_config_get(k, kn, buf, cap));
  return v == null ? null : text(v);
}

// A plugin variable, kept by the host and shared by every instance; null
// when it is not set.
export function getVar(key: string): Uint8Array | null {
  return readSized(key, (k: usize, kn: i32, buf: usize, cap: i32): i32 => host_var_get(k, kn, buf, cap));
}

// Sets a plugin variable: RESULT_OK or an error.
export function setVar(key: string, value: Uint8Array): i32 {
  const k = utf8(key);
  const r = host_var_set(k.dataStart, k.length, value.dataStart, value.length);
  lastResult = r < 0 ? r : RESULT_OK;
  return lastResult;
}

// Adds delta to a decimal integer variable (absent: 0), atomically, and
// returns the sum; check lastResult.
export function addVar(key: string, delta: i64): i64 {
  const k = utf8(key);
  const out = memory.data(8);
  const r = host_var_add(k.dataStart, k.length, delta, out);
  lastResult = r < 0 ? r : RESULT_OK;
  return r < 0 ? 0 : load<i64>(out);
}

// ---- nested calls (ABI section 16) -------------------------------------

// One nested call of a command.
export class Call {
  command: string = "";
  executor: string = ""; // "": this host
  payload: Uint8Array = new Uint8Array(0);
  contentType: string = "";
  timeoutMs: i64 = 0; // 0: the caller's deadline alone
  metadata: Map<string, string> = new Map<string, string>();
}

// Outcomes of a call.
export const OUTCOME_DONE: u8 = 0;
export const OUTCOME_TIMED_OUT: u8 = 1;
export const OUTCOME_NOT_ARRIVED: u8 = 2;
export const OUTCOME_ERROR: u8 = 3;

// A nested call's result. failure is non-zero when the invocation failed
// as a whole (its reason: 1 invalid, 2 unavailable, 3 cycle, 4 depth, 6
// host fault, 7 canceled...); message says why.
export class CallResult {
  failure: u8 = 0;
  outcome: u8 = OUTCOME_ERROR;
  reason: u8 = 0;
  status: u32 = 0;
  appError: bool = false;
  message: string = "";
  payload: Uint8Array = new Uint8Array(0);
  contentType: string = "";
}

// How a fan-out waits for its branches: all of them (the default), any,
// or m of them; timeoutMs is the wait from the first arrival (0: the
// host's default), and failOnTimeout fails the invocation when it fires
// instead of going on with what arrived.
export class Sync {
  strategy: u8 = 0; // 0 all, 1 any, 2 m of n
  m: u32 = 0;
  timeoutMs: i64 = 0;
  failOnTimeout: bool = false;
}

// Calls one command and waits for its result.
export function callCommand(call: Call): CallResult {
  const names = new Array<string>(1);
  names[0] = "";
  const calls = new Array<Call>(1);
  calls[0] = call;
  return fanOut(new Sync(), names, calls)[0];
}

// Runs the calls at once, branch i named names[i], and waits as sync
// says; the results come in the calls' order. When the invocation failed
// as a whole, every result's failure holds its reason.
export function fanOut(sync: Sync, names: string[], calls: Call[]): CallResult[] {
  const w = new Writer();
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i];
    const b = new Writer();
    if (names[i].length) b.string(1, names[i]);
    b.string(2, call.command);
    if (call.executor.length) b.string(3, call.executor);
    if (call.payload.length) b.bytes(4, call.payload);
    if (call.contentType.length) b.string(5, call.contentType);
    b.map(7, call.metadata);
    if (call.timeoutMs) b.i64(8, call.timeoutMs);
    w.bytes(1, b.finish());
  }
  const s = new Writer();
  if (sync.strategy) s.u8(1, sync.strategy);
  if (sync.m) s.u32(2, sync.m);
  if (sync.timeoutMs) s.i64(3, sync.timeoutMs);
  if (sync.failOnTimeout) s.u8(4, 1);
  w.bytes(2, s.finish());
  const inv = w.finish();
  const results = new Array<CallResult>(calls.length);
  for (let i = 0; i < calls.length; i++) results[i] = new CallResult();
  const failAll = (reason: u8, message: string, rs: CallResult[]): CallResult[] => {
    for (let i = 0; i < rs.length; i++) {
      rs[i].failure = reason;
      rs[i].message = message;
    }
    return rs;
  };
  const n = host_invoke(inv.dataStart, inv.length);
  if (n < 0) return failAll(n == -6 ? 7 : 6, "invoke failed with result " + n.toString(), results);
  const out = new Uint8Array(n);
  const recs = host_invoke_result_read(out.dataStart, n) == n ? records(out) : null;
  if (recs == null) return failAll(6, "the invocation result does not decode", results);
  let failure: u8 = 0;
  let message = "";
  let next = 0;
  for (let i = 0; i < recs.length; i++) {
    const v = recs[i].value;
    if (recs[i].tag == 1 && v.length == 1) failure = v[0];
    else if (recs[i].tag == 2) message = text(v);
    else if (recs[i].tag == 3 && next < results.length) {
      const res = results[next++];
      const br = records(v);
      if (br == null) continue;
      for (let j = 0; j < br.length; j++) {
        const x = br[j].value;
        switch (br[j].tag) {
          case 2: if (x.length == 1) res.outcome = x[0]; break;
          case 3: if (x.length == 1) res.reason = x[0]; break;
          case 4: if (x.length == 4) res.status = load<u32>(x.dataStart); break;
          case 5: if (x.length == 1) res.appError = x[0] == 1; break;
          case 6: res.message = text(x); break;
          case 7: res.payload = x.slice(); break;
          case 8: res.contentType = text(x); break;
          default: break;
        }
      }
    }
  }
  if (failure != 0) {
    for (let i = 0; i < results.length; i++) {
      results[i].failure = failure;
      if (i >= next) results[i].message = message; // no branch result: the invocation's reason
    }
  }
  return results;
}

// ---- the state store (ABI section 17) ----------------------------------

// The durable state store: keys and values kept by the host, seen by
// every replica. A handler's writes are staged: it reads them back at
// once, and everyone else sees them when its reply is recorded, all of
// them or none (a call that fails, times out or is cancelled writes
// nothing, and a request delivered twice writes once).

// How a state call went: OK, or a typed error.
export enum StateResult {
  OK = 0,
  // No such key (or it expired).
  NotFound = -1,
  // A key, a value or the call's writes are over their bound.
  TooLarge = -2,
  // The namespace is full (its operator file's "state" limits).
  Quota = -3,
  // The value is not a decimal integer (or the sum overflows).
  NotInteger = -5,
  // An invalid namespace name, an empty key or a bad option.
  Invalid = -7,
  // The operator file does not grant the namespace (or grants it
  // read-only).
  Denied = -9,
  // A condition failed: the key exists, or its version is not the one
  // named.
  Conflict = -10,
  // The store cannot be read or written now; nothing was staged.
  Unavailable = -11,
}

const RESULT_TOO_SMALL: i32 = -8;

// A key's value and version (get); value is empty unless result is OK.
export class StateItem {
  result: StateResult = StateResult.OK;
  value: Uint8Array = new Uint8Array(0);
  // 0 for a key this call wrote, until its reply is recorded.
  version: u64 = 0;

  // The value as UTF-8 text.
  text(): string {
    return text(this.value);
  }
}

// Conditions and expiry of a set; as made: unconditional, never to expire.
export class SetOptions {
  ttlMs: i64 = 0; // the key expires this long after the commit; 0: never
  ifVersion: u64 = 0; // only if the key's version is this (compare-and-set); 0: any
  ifAbsent: bool = false; // only if the key does not exist
}

// What delete did: existed says whether the key exists.
export class StateDeleted {
  result: StateResult = StateResult.OK;
  existed: bool = false;
}

// What add did: the sum.
export class StateSum {
  result: StateResult = StateResult.OK;
  sum: i64 = 0;
}

// A page of list: keys in byte order; when more, next() lists the page
// after the last key.
export class StatePage {
  result: StateResult = StateResult.OK;
  keys: string[] = [];
  more: bool = false;
  space: StateSpace;
  prefix: string;
  last: Uint8Array = new Uint8Array(0); // the last key's bytes

  constructor(space: StateSpace, prefix: string) {
    this.space = space;
    this.prefix = prefix;
  }

  // The next page: the keys after this page's last.
  next(): StatePage {
    return this.space.listAfter(this.prefix, this.last);
  }
}

// A namespace of the state store: the plugin's own (state()) or a shared
// one the operator granted (sharedState(name)).
export class StateSpace {
  private ns: Uint8Array;

  constructor(name: string) {
    this.ns = utf8(name);
  }

  // The key's value and version.
  get(key: string): StateItem {
    const k = utf8(key);
    const out = new StateItem();
    const version = memory.data(8);
    let buf = new Uint8Array(256);
    for (let i = 0; i < 4; i++) {
      const n = host_state_get(this.ns.dataStart, this.ns.length, k.dataStart, k.length, buf.dataStart, buf.length, version);
      if (n < 0) {
        out.result = n;
        return out;
      }
      if (n <= buf.length) {
        out.value = buf.subarray(0, n);
        out.version = load<u64>(version);
        return out;
      }
      buf = new Uint8Array(n);
    }
    out.result = StateResult.Unavailable; // the value kept changing size while being read
    return out;
  }

  // Stages key = value, on the options' conditions.
  set(key: string, value: Uint8Array, opts: SetOptions | null = null): StateResult {
    const k = utf8(key);
    const o = opts != null ? opts : new SetOptions();
    const r = host_state_set(this.ns.dataStart, this.ns.length, k.dataStart, k.length, value.dataStart, value.length,
      o.ttlMs, o.ifVersion, o.ifAbsent ? 1 : 0);
    return r < 0 ? r : StateResult.OK;
  }

  // Stages key = the UTF-8 text.
  setText(key: string, value: string, opts: SetOptions | null = null): StateResult {
    return this.set(key, utf8(value), opts);
  }

  // Stages the key's removal, only if its version is ifVersion when that
  // is not 0.
  delete(key: string, ifVersion: u64 = 0): StateDeleted {
    const k = utf8(key);
    const out = new StateDeleted();
    const r = host_state_delete(this.ns.dataStart, this.ns.length, k.dataStart, k.length, ifVersion);
    if (r < 0) out.result = r;
    else out.existed = r == 1;
    return out;
  }

  // Adds delta to the key read as a decimal integer (absent reads 0) and
  // stages the sum. Two calls adding to one key at once cannot both
  // commit: the later one runs again.
  add(key: string, delta: i64): StateSum {
    const k = utf8(key);
    const out = new StateSum();
    const sum = memory.data(8);
    const r = host_state_add(this.ns.dataStart, this.ns.length, k.dataStart, k.length, delta, sum);
    if (r < 0) out.result = r;
    else out.sum = load<i64>(sum);
    return out;
  }

  // The keys that start with prefix and sort after after ("": from the
  // first), in byte order, a page (at most 256) at a time.
  list(prefix: string, after: string = ""): StatePage {
    return this.listAfter(prefix, utf8(after));
  }

  // list, after a key given as bytes (a page's last).
  listAfter(prefix: string, after: Uint8Array): StatePage {
    const p = utf8(prefix);
    const page = new StatePage(this, prefix);
    let buf = new Uint8Array(16 << 10);
    let n = host_state_list(this.ns.dataStart, this.ns.length, p.dataStart, p.length, after.dataStart, after.length, buf.dataStart, buf.length);
    if (n == RESULT_TOO_SMALL) { // not even one key fits: room for the longest
      buf = new Uint8Array(1 << 20);
      n = host_state_list(this.ns.dataStart, this.ns.length, p.dataStart, p.length, after.dataStart, after.length, buf.dataStart, buf.length);
    }
    if (n < 0) {
      page.result = n;
      return page;
    }
    const recs = records(buf.subarray(0, n));
    if (recs == null) {
      page.result = StateResult.Invalid;
      return page;
    }
    for (let i = 0; i < recs.length; i++) {
      const v = recs[i].value;
      if (recs[i].tag == 1) {
        page.keys.push(text(v));
        page.last = v;
      } else if (recs[i].tag == 2) {
        page.more = v.length == 1 && v[0] == 1;
      }
    }
    return page;
  }
}

// The plugin's own namespace.
export function state(): StateSpace {
  return new StateSpace("");
}

// The shared namespace name; the operator file must grant it ("state":
// {"shared": {"NAME": "read"}} or "read-write").
export function sharedState(name: string): StateSpace {
  return new StateSpace(name);
}

// ---- publishing (ABI section 18) ---------------------------------------

// A handler sends a message (an event, an alarm, a reading) to a topic its
// operator file grants ("publish": {"topics": [...]}; nothing is granted
// by default). A command that is not idempotent sends its messages once
// its reply is recorded, in the same commit as its state writes: a call
// that fails sends none, a request delivered twice sends them once, and a
// message may arrive more than once, always with one id (the user
// property cmdhost-message-id). An idempotent command's go out as the call
// runs.

// How a publish went: OK, or why the message was not taken.
export enum PublishResult {
  OK = 0,
  // Over the call's bound of messages or bytes.
  TooLarge = -2,
  // Over the plugin's rate, or the outbox is full: try later.
  Limit = -3,
  // The message breaks the rules: not a topic name, a reserved property,
  // bad UTF-8, an event without a type.
  Invalid = -7,
  // No grant of the operator file covers the topic (the host's own topics
  // are never granted).
  Denied = -9,
  // The host cannot take messages now.
  Unavailable = -11,
}

// A message's CloudEvents attributes, each at most 512 bytes; the host adds
// specversion, id (the message's id) and time.
export class Event {
  type: string; // required
  source: string = ""; // "": /cmdhost/EXECUTOR/PLUGIN
  subject: string = "";
  dataSchema: string = "";

  constructor(type: string) {
    this.type = type;
  }
}

// A message to publish: a topic name (no wildcard, no empty level), a
// payload and, optionally, a content type, user properties (metadata), a
// CloudEvent's attributes (event) and an expiry.
export class Message {
  topic: string;
  payload: Uint8Array;
  contentType: string = "";
  format: u8 = 0; // 0 bytes, 1 UTF-8
  private _metadata: Map<string, string> | null = null;
  // Makes the message a CloudEvent (binary mode: the attributes as user
  // properties, the payload as its data).
  event: Event | null = null;
  expiryMs: i64 = 0; // 0: none

  constructor(topic: string, payload: Uint8Array = new Uint8Array(0)) {
    this.topic = topic;
    this.payload = payload;
  }

  // A message of UTF-8 text, content type text/plain.
  static text(topic: string, s: string): Message {
    const m = new Message(topic, utf8(s));
    m.contentType = "text/plain";
    m.format = 1;
    return m;
  }

  // User properties (made on first use): names not starting with "__"
  // (the protocol's), not cmdhost-message-id nor, with an event, a
  // CloudEvents attribute.
  get metadata(): Map<string, string> {
    if (this._metadata == null) this._metadata = new Map<string, string>();
    return this._metadata!;
  }
  set metadata(m: Map<string, string>) {
    this._metadata = m;
  }

  withContentType(ct: string): Message {
    this.contentType = ct;
    return this;
  }
  withMetadata(key: string, value: string): Message {
    this.metadata.set(key, value);
    return this;
  }
  withEvent(e: Event): Message {
    this.event = e;
    return this;
  }
  withExpiryMs(ms: i64): Message {
    this.expiryMs = ms;
    return this;
  }
  hasMetadata(): bool {
    return this._metadata != null && this._metadata!.size > 0;
  }
}

// Publishes m.
export function publish(m: Message): PublishResult {
  const w = new Writer();
  w.string(1, m.topic);
  if (m.payload.length) w.bytes(2, m.payload);
  if (m.contentType.length) w.string(3, m.contentType);
  if (m.format != 0) w.u8(4, m.format);
  if (m.hasMetadata()) w.map(5, m.metadata);
  const e = m.event;
  if (e != null) {
    const ev = new Writer();
    ev.string(1, e.type);
    if (e.source.length) ev.string(2, e.source);
    if (e.subject.length) ev.string(3, e.subject);
    if (e.dataSchema.length) ev.string(4, e.dataSchema);
    w.bytes(6, ev.finish());
  }
  if (m.expiryMs > 0) w.i64(7, m.expiryMs);
  const r = host_publish(w.buf.dataStart, w.len);
  return r < 0 ? r : PublishResult.OK;
}

// ---- outbound HTTP (ABI section 19) ------------------------------------

// A handler calls an HTTP API on a host its operator file grants ("http":
// {"hosts": [...]}; nothing is granted by default). The guest is blocked
// while the request runs; the call's deadline always cuts it. HTTP is not
// transactional: a request a call made has happened even if the call then
// fails or runs again (at least once); for a command that is not
// idempotent the host adds an Idempotency-Key header (unless the request
// sets one), the same at every run of the same request.

// A header's name and one of its values.
export class Header {
  constructor(public name: string, public value: string) {}
}

// A request to send.
export class HttpRequest {
  method: string; // "": GET; CONNECT and TRACE are refused
  url: string; // an absolute http or https URL
  // A value each: a name may repeat. The host sets Host, Content-Length,
  // Transfer-Encoding and the connection's headers itself (a request that
  // names one is invalid).
  headers: Header[] = [];
  body: Uint8Array = new Uint8Array(0);
  timeoutMs: i64 = 0; // 0: the grant's (10 s by default); a longer one is cut to it

  constructor(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  static get(url: string): HttpRequest {
    return new HttpRequest("GET", url);
  }
  static post(url: string, body: Uint8Array): HttpRequest {
    return new HttpRequest("POST", url).withBody(body);
  }

  // Adds a header value: a name given twice is sent with both values.
  withHeader(name: string, value: string): HttpRequest {
    this.headers.push(new Header(name, value));
    return this;
  }
  withBody(body: Uint8Array): HttpRequest {
    this.body = body;
    return this;
  }
  withTimeoutMs(ms: i64): HttpRequest {
    this.timeoutMs = ms;
    return this;
  }
}

// Why a request got no response (ABI section 19); a later host may add
// reasons: treat any other as a failure.
export enum HttpFailure {
  None = 0,
  // The request breaks the rules, or its URL does not parse.
  Invalid = 1,
  // The grant does not cover the scheme, host, port or method; the address
  // is not public and the grant does not name it; a redirect to any of
  // these; the operator file grants no HTTP.
  Denied = 2,
  // The name does not resolve.
  Dns = 3,
  // No connection: refused, unreachable, reset.
  Connect = 4,
  // The TLS handshake failed.
  Tls = 5,
  // No response within the request's timeout (or the grant's).
  Timeout = 6,
  // The request's body, or the response's headers or body, over the bound.
  TooLarge = 7,
  // Over the call's bound of requests, or the plugin's rate.
  Limit = 8,
  // More redirects than the grant follows.
  Redirects = 9,
  // The host offers no outbound HTTP.
  Unavailable = 10,
  // Anything else: a malformed response, a connection closed mid-body.
  Failed = 11,
}

const httpReasons = ["none", "invalid", "denied", "dns", "connect", "tls", "timeout", "too_large", "limit", "redirects", "unavailable", "failed"];

// A failure's ABI name ("too_large"); "unknown" for a later host's.
export function httpReason(f: HttpFailure): string {
  return f >= 0 && f < httpReasons.length ? httpReasons[f] : "unknown";
}

// What a request got: a response (failure None, whatever its status: a
// 404 or a 500 is a response), or why there is none (failure, message).
export class HttpResponse {
  failure: HttpFailure = HttpFailure.None;
  message: string = ""; // with a failure, why
  status: u32 = 0;
  headers: Header[] = []; // a value each, names as Go writes them (Content-Type)
  body: Uint8Array = new Uint8Array(0);
  url: string = ""; // the URL that answered: the request's, or the last redirect's

  // The first value of the header name (any case); null without one.
  header(name: string): string | null {
    const want = name.toLowerCase();
    for (let i = 0; i < this.headers.length; i++) {
      if (this.headers[i].name.toLowerCase() == want) return this.headers[i].value;
    }
    return null;
  }
  // Every value of the header name (any case), in order.
  headerValues(name: string): string[] {
    const want = name.toLowerCase();
    const out = new Array<string>();
    for (let i = 0; i < this.headers.length; i++) {
      if (this.headers[i].name.toLowerCase() == want) out.push(this.headers[i].value);
    }
    return out;
  }
  // The body as UTF-8 text.
  text(): string {
    return text(this.body);
  }
}

function httpFailed(message: string): HttpResponse {
  const r = new HttpResponse();
  r.failure = HttpFailure.Failed;
  r.message = message;
  return r;
}

// Sends req and returns the response, or why there is none.
export function http(req: HttpRequest): HttpResponse {
  const w = new Writer();
  if (req.method.length) w.string(1, req.method);
  w.string(2, req.url);
  for (let i = 0; i < req.headers.length; i++) w.entry(3, req.headers[i].name, req.headers[i].value);
  if (req.body.length) w.bytes(4, req.body);
  if (req.timeoutMs > 0) w.i64(5, req.timeoutMs);
  const n = host_http_request(w.buf.dataStart, w.len);
  if (n < 0) return httpFailed("the host refused the request: result " + n.toString() + " (outside a handler, or the call's deadline passed)");
  const out = new Uint8Array(n);
  const recs = host_http_result_read(out.dataStart, n) == n ? records(out) : null;
  if (recs == null) return httpFailed("the http result does not decode");
  const r = new HttpResponse();
  for (let i = 0; i < recs.length; i++) {
    const v = recs[i].value;
    switch (recs[i].tag) {
      case 1: if (v.length == 1) r.failure = v[0]; break;
      case 2: r.message = text(v); break;
      case 3: if (v.length == 4) r.status = load<u32>(v.dataStart); break;
      case 4: { // a header entry: a name may repeat
        const k = v.length >= 4 ? <i32>load<u32>(v.dataStart) : -1;
        if (k < 0 || k > v.length - 4) return httpFailed("the http result does not decode");
        r.headers.push(new Header(text(v.subarray(4, 4 + k)), text(v.subarray(4 + k))));
        break;
      }
      case 5: r.body = v; break; // out is this result's alone
      case 6: r.url = text(v); break;
      default: break;
    }
  }
  return r;
}
