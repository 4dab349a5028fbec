;; wat-echo: a cmdhost plugin written by hand in WebAssembly text.
;;
;; It serves one command, `wat-echo`, that answers every request with the
;; request's own payload and content type. It uses nothing but the cmdhost
;; ABI (abi/ABI.md): no WASI, no allocator, no runtime. Guest authors in
;; other languages can read it as the smallest complete plugin.
;;
;; Build:  wat2wasm testdata/wat-echo/echo.wat -o testdata/plugins/wat-echo.wasm
;;
;; Memory layout (all offsets into the exported `memory`):
;;   16 .. 43     the encoded Description (data segment below)
;;   1024 ..      the encoded Request, copied in by request_read
;;   after it     the encoded Response, built by cmdhost_handle
;; The module starts with one 64 KiB page and grows the memory when a
;; request and its response do not fit.
(module
  ;; ---- host imports (module "cmdhost", see abi/names.go) ----------------

  ;; describe(ptr, len) -> 0 or a negative Result. Only valid inside
  ;; cmdhost_describe.
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  ;; request_len() -> byte size of the encoded Request (negative on error).
  (import "cmdhost" "request_len"    (func $request_len    (result i32)))
  ;; request_read(ptr, cap) -> bytes copied, or a negative Result
  ;; (-8 ResultTooSmall when cap < request_len).
  (import "cmdhost" "request_read"   (func $request_read   (param i32 i32) (result i32)))
  ;; response_write(ptr, len) -> 0, or a negative Result (-7 ResultInvalid
  ;; when the bytes do not decode or break the response rules).
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  ;; One page to start with, no maximum: cmdhost_handle grows it on demand.
  (memory (export "memory") 1)

  ;; Where the Request is read to. Anything above the description will do.
  (global $REQ i32 (i32.const 1024))

  ;; ---- the Description --------------------------------------------------
  ;;
  ;; An envelope is a flat run of records: tag u8 | len u32 LE | value.
  ;; These 27 bytes are abi.AppendDescription of
  ;;   Description{Version: 1, Commands: []Command{{Name: "wat-echo"}}}
  ;;
  ;;   01                      tag 1  descVersion (u32)
  ;;   04 00 00 00             len 4
  ;;   01 00 00 00             value: ABI version 1
  ;;   02                      tag 2  descCommand (nested Command envelope)
  ;;   0d 00 00 00             len 13 (the nested envelope below)
  ;;     01                      tag 1  cmdName (string)
  ;;     08 00 00 00             len 8
  ;;     77 61 74 2d 65 63 68 6f "wat-echo"
  ;;
  ;; Absent on purpose: descName (the module's name, optional),
  ;; cmdIdempotent (absent = false), cmdTTL (absent = none; only idempotent
  ;; commands may have one), cmdContentType (none = any content type),
  ;; cmdTimeout (absent = the host's default), cmdTopic (absent = the host's
  ;; default topic pattern).
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0d\00\00\00"
    "\01\08\00\00\00\77\61\74\2d\65\63\68\6f")

  ;; ---- exports ------------------------------------------------------------

  ;; The ABI version this module was built for.
  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  ;; Hand the Description to the host. 0 = done; 1 if the host refused it
  ;; (the host has its own error for that already, so 1 just says "failed").
  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 27)) (i32.const 0)))

  ;; $ensure: make the memory at least $need bytes long. Returns 0 on
  ;; success, 1 when memory.grow fails. $need is an i64 so that the sum of
  ;; two large lengths cannot wrap around.
  (func $ensure (param $need i64) (result i32)
    (local $have i64)
    ;; memory.size counts 64 KiB pages.
    (local.set $have
      (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
    (if (i64.le_u (local.get $need) (local.get $have))
      (then (return (i32.const 0))))
    ;; pages = ceil((need - have) / 65536); memory.grow returns -1 on failure
    ;; (including when the result would pass 4 GiB or the memory's maximum).
    (i32.eq
      (memory.grow
        (i32.wrap_i64
          (i64.shr_u
            (i64.add (i64.sub (local.get $need) (local.get $have)) (i64.const 0xffff))
            (i64.const 16))))
      (i32.const -1)))

  ;; Run one request: echo its payload and content type.
  ;; Returns 0 when the host took the response, 1 otherwise. A non-zero
  ;; return is a host fault: the caller gets an error, not a reply.
  (func (export "cmdhost_handle") (result i32)
    (local $len i32)      ;; size of the encoded Request
    (local $p i32)        ;; cursor over the Request's records
    (local $end i32)      ;; one past the Request's last byte
    (local $vlen i32)     ;; the current record's value length
    (local $payload i32)  ;; offset of the payload record, 0 = absent
    (local $ctype i32)    ;; offset of the content-type record, 0 = absent
    (local $out i32)      ;; start of the Response
    (local $o i32)        ;; end of the Response written so far

    ;; 1. Find out how big the Request is.
    (local.set $len (call $request_len))
    (if (i32.lt_s (local.get $len) (i32.const 0))
      (then (return (i32.const 1))))

    ;; 2. Make room for the Request and the Response. The Response holds at
    ;;    most the Request's payload and content-type records, so it is never
    ;;    longer than the Request: REQ + 2*len bytes are enough.
    (if (call $ensure
          (i64.add (i64.extend_i32_u (global.get $REQ))
                   (i64.shl (i64.extend_i32_u (local.get $len)) (i64.const 1))))
      (then (return (i32.const 1))))

    ;; 3. Copy the Request in. The host returns the number of bytes copied.
    (if (i32.ne (call $request_read (global.get $REQ) (local.get $len))
                (local.get $len))
      (then (return (i32.const 1))))

    ;; 4. Walk the records: tag u8 | len u32 LE | value. Remember where the
    ;;    payload (request tag 2) and content-type (request tag 3) records
    ;;    start; skip every other tag, known or not.
    (local.set $p (global.get $REQ))
    (local.set $end (i32.add (global.get $REQ) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.eq (local.get $p) (local.get $end)))
        ;; A header needs 5 bytes.
        (if (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 5))
          (then (return (i32.const 1))))
        ;; The length is little endian and need not be aligned.
        (local.set $vlen (i32.load offset=1 align=1 (local.get $p)))
        ;; The value must fit in what is left.
        (if (i32.gt_u (local.get $vlen)
                      (i32.sub (i32.sub (local.get $end) (local.get $p)) (i32.const 5)))
          (then (return (i32.const 1))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 2))
          (then (local.set $payload (local.get $p))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 3))
          (then (local.set $ctype (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.add (local.get $vlen) (i32.const 5))))
        (br $next)))

    ;; 5. Build the Response right after the Request. A response record has
    ;;    the same shape as a request record, so each one is copied whole
    ;;    (header and value) and only its tag is rewritten:
    ;;      request tag 2 (payload)      -> response tag 6 (payload)
    ;;      request tag 3 (content type) -> response tag 7 (content type)
    ;;    No status record: absent means 200 OK.
    (local.set $out (local.get $end))
    (local.set $o (local.get $out))
    (if (local.get $payload)
      (then
        (local.set $vlen (i32.add (i32.load offset=1 align=1 (local.get $payload)) (i32.const 5)))
        (memory.copy (local.get $o) (local.get $payload) (local.get $vlen))
        (i32.store8 (local.get $o) (i32.const 6))
        (local.set $o (i32.add (local.get $o) (local.get $vlen)))))
    (if (local.get $ctype)
      (then
        (local.set $vlen (i32.add (i32.load offset=1 align=1 (local.get $ctype)) (i32.const 5)))
        (memory.copy (local.get $o) (local.get $ctype) (local.get $vlen))
        (i32.store8 (local.get $o) (i32.const 7))
        (local.set $o (i32.add (local.get $o) (local.get $vlen)))))

    ;; 6. Hand it over. An empty Response (no records) is a valid 200 with
    ;;    no payload. The host copies it at once, so the memory is free again
    ;;    as soon as the call returns.
    (i32.ne (call $response_write (local.get $out) (i32.sub (local.get $o) (local.get $out)))
            (i32.const 0)))
)
