;; bad: cmdhost_abi_version returns 99, a version this host does not speak, so loading must fail.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; A valid Description{Version: 1, Commands: {{Name: "wat-echo"}}}: the
  ;; host must refuse the module on the export's answer alone.
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0d\00\00\00"
    "\01\08\00\00\00\77\61\74\2d\65\63\68\6f")

  ;; The fault: 99 instead of 1.
  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 99))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 27)) (i32.const 0)))

  ;; An empty Response: a valid 200 with no payload.
  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
