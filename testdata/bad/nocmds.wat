;; bad: the Description has the version record and no command; a module must serve at least one, so loading must fail.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription(nil, &Description{Version: 1}), 9 bytes:
  ;;   01 04000000 01000000   version (tag 1, u32) = 1
  ;; and no tag-2 (command) record.
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 9)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
