;; hostile: a loop that only calls a host function, for ever; the deadline must cut it (internal/wasm/cut_test.go).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "hostcalls"}}}, 28 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0e\00\00\00" "\01\09\00\00\00hostcalls")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 28)) (i32.const 0)))

  ;; Never returns: a loop that only calls a host function (describe,
  ;; which answers ResultState during a call).
  (func (export "cmdhost_handle") (result i32)
    (loop $again
      (drop (call $describe (i32.const 16) (i32.const 1)))
      (br $again))
    (i32.const 0))
)
