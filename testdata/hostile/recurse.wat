;; hostile: recurses without end. wazero grows the call's stack to ~5 MiB
;; (it may hold 8 MiB, the stack it grows from included) and then traps
;; (stack overflow): the call must fail as a trap, within what the guest
;; memory budget reserves for it, and the host must let go of the discarded
;; instance, stack and memory, at once.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "recurse"}}}, 26 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0c\00\00\00" "\01\07\00\00\00recurse")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 26)) (i32.const 0)))

  ;; The fault: never returns.
  (func $forever (param $n i32) (result i32)
    (i32.add (call $forever (i32.add (local.get $n) (i32.const 1))) (i32.const 1)))

  (func (export "cmdhost_handle") (result i32)
    (call $forever (i32.const 0)))
)
