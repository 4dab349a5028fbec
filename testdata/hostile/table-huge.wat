;; hostile: declares a table of 2^27 entries, the most wazero accepts (1 GiB
;; of references per instance). The host must refuse it at load, naming the
;; table, its size, the plugin's table limit and how to raise it.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; The fault.
  (table $t 134217728 funcref)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "table-huge"}}}, 29 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0f\00\00\00" "\01\0a\00\00\00table-huge")
  ;; A response with an empty payload record (tag 6), 5 bytes.
  (data (i32.const 64) "\06\00\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 29)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 64) (i32.const 5)) (i32.const 0)))
)
