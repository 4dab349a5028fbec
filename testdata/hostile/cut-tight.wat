;; hostile: a loop with no calls that never ends; the deadline must cut it (internal/wasm/cut_test.go).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "tight"}}}, 24 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0a\00\00\00" "\01\05\00\00\00tight")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 24)) (i32.const 0)))

  ;; Never returns: a loop with no calls.
  (func (export "cmdhost_handle") (result i32)
    (local $i i64)
    (loop $again
      (local.set $i (i64.add (i64.mul (local.get $i) (i64.const 31)) (i64.const 7)))
      (br $again))
    (i32.const 0))
)
