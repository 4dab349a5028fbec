;; bad: imports wasi_snapshot_preview1.sock_accept; the host never grants network access, so loading must fail.
;;
;; Otherwise this is testdata/wat-echo/echo.wat (comments trimmed): the
;; sock_accept import is the only thing wrong with it. It is never called.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "request_len"    (func $request_len    (result i32)))
  (import "cmdhost" "request_read"   (func $request_read   (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))
  ;; sock_accept(fd, flags, result_fd_ptr) -> errno
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))

  (memory (export "memory") 1)
  (global $REQ i32 (i32.const 1024))

  ;; Description{Version: 1, Commands: []Command{{Name: "wat-echo"}}} (27 bytes)
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0d\00\00\00"
    "\01\08\00\00\00\77\61\74\2d\65\63\68\6f")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 27)) (i32.const 0)))

  (func $ensure (param $need i64) (result i32)
    (local $have i64)
    (local.set $have
      (i64.shl (i64.extend_i32_u (memory.size)) (i64.const 16)))
    (if (i64.le_u (local.get $need) (local.get $have))
      (then (return (i32.const 0))))
    (i32.eq
      (memory.grow
        (i32.wrap_i64
          (i64.shr_u
            (i64.add (i64.sub (local.get $need) (local.get $have)) (i64.const 0xffff))
            (i64.const 16))))
      (i32.const -1)))

  (func (export "cmdhost_handle") (result i32)
    (local $len i32) (local $p i32) (local $end i32) (local $vlen i32)
    (local $payload i32) (local $ctype i32) (local $out i32) (local $o i32)
    (local.set $len (call $request_len))
    (if (i32.lt_s (local.get $len) (i32.const 0))
      (then (return (i32.const 1))))
    (if (call $ensure
          (i64.add (i64.extend_i32_u (global.get $REQ))
                   (i64.shl (i64.extend_i32_u (local.get $len)) (i64.const 1))))
      (then (return (i32.const 1))))
    (if (i32.ne (call $request_read (global.get $REQ) (local.get $len))
                (local.get $len))
      (then (return (i32.const 1))))
    (local.set $p (global.get $REQ))
    (local.set $end (i32.add (global.get $REQ) (local.get $len)))
    (block $done
      (loop $next
        (br_if $done (i32.eq (local.get $p) (local.get $end)))
        (if (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 5))
          (then (return (i32.const 1))))
        (local.set $vlen (i32.load offset=1 align=1 (local.get $p)))
        (if (i32.gt_u (local.get $vlen)
                      (i32.sub (i32.sub (local.get $end) (local.get $p)) (i32.const 5)))
          (then (return (i32.const 1))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 2))
          (then (local.set $payload (local.get $p))))
        (if (i32.eq (i32.load8_u (local.get $p)) (i32.const 3))
          (then (local.set $ctype (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.add (local.get $vlen) (i32.const 5))))
        (br $next)))
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
    (i32.ne (call $response_write (local.get $out) (i32.sub (local.get $o) (local.get $out)))
            (i32.const 0)))
)
