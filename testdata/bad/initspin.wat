;; bad: _initialize loops forever, so loading must be stopped by the load timeout rather than hang.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; Description{Version: 1, Commands: {{Name: "wat-echo"}}}
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0d\00\00\00"
    "\01\08\00\00\00\77\61\74\2d\65\63\68\6f")

  ;; The fault: a tight loop that never calls the host.
  (func (export "_initialize")
    (loop $forever
      (br $forever)))

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 27)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
