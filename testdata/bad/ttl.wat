;; bad: the one command, "ttl", is not idempotent but declares a 5 s response TTL (abi.Description.Validate refuses that), so loading must fail.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of
  ;;   Description{Version: 1, Commands: {{Name: "ttl", ResponseTTL: 5 * time.Second}}}
  ;; 35 bytes:
  ;;   01 04000000 01000000       version (tag 1, u32) = 1
  ;;   02 15000000                command (tag 2), nested envelope of 21 bytes:
  ;;     01 03000000 "ttl"          name (tag 1)
  ;;     03 08000000 8813000000000000   TTL (tag 3, i64 ms) = 5000
  ;;   No idempotent record (tag 2 in the command): absent = false.
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\15\00\00\00"
    "\01\03\00\00\00\74\74\6c"
    "\03\08\00\00\00\88\13\00\00\00\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 35)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
