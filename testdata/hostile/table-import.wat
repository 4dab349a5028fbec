;; hostile: imports a table of 2^27 entries. The host provides only
;; functions: it must refuse the import at load with a message that says so.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))
  ;; The fault.
  (import "env" "table" (table 134217728 funcref))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "table-import"}}}, 31 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\11\00\00\00" "\01\0c\00\00\00table-import")
  ;; A response with an empty payload record (tag 6), 5 bytes.
  (data (i32.const 64) "\06\00\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 31)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 64) (i32.const 5)) (i32.const 0)))
)
