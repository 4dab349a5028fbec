// kit-as: the guest kit's test plugin in AssemblyScript
// (testdata/kit/README.md says what each command does;
// internal/nested/guestkit_test.go checks it).
import {
  handle, Request, Response, Options, Call, callCommand, fanOut, Sync, config, getVar, setVar, addVar,
  log, lastResult, LEVEL_INFO, RESULT_OK,
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
