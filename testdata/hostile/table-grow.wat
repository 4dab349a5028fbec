;; hostile: one table.grow of 0xFFFFFFFD entries (32 GiB of references in
;; wazero), on a table whose declared maximum (0xFFFFFFFF) allows it. The
;; host must lower the maximum to its table limit so that table.grow
;; returns -1, as the spec says it does when a table cannot grow.
;; cmdhost_handle answers what table.grow returned, as a 4-byte little-endian
;; payload.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  (table $t 1 0xffffffff funcref)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "table-grow"}}}, 29 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0f\00\00\00" "\01\0a\00\00\00table-grow")
  ;; A response of one payload record (tag 6) of 4 bytes; $reply writes the value at 69.
  (data (i32.const 64) "\06\04\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 29)) (i32.const 0)))

  ;; $reply answers $v as the payload; 0 when the host took the response.
  (func $reply (param $v i32) (result i32)
    (i32.store (i32.const 69) (local.get $v))
    (i32.ne (call $response_write (i32.const 64) (i32.const 9)) (i32.const 0)))

  ;; The fault.
  (func (export "cmdhost_handle") (result i32)
    (call $reply (table.grow $t (ref.null func) (i32.const 0xfffffffd))))
)
