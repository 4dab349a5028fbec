;; bad (at call time): cmdhost_handle returns 0 without calling response_write; loading succeeds, every call must fail as bad output.
(module
  (import "cmdhost" "describe" (func $describe (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "nohandle"}}}
  ;; 27 bytes:
  ;;   01 04000000 01000000        version (tag 1, u32) = 1
  ;;   02 0d000000                 command (tag 2), nested envelope of 13 bytes:
  ;;     01 08000000 "nohandle"      name (tag 1)
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0d\00\00\00"
    "\01\08\00\00\00\6e\6f\68\61\6e\64\6c\65")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 27)) (i32.const 0)))

  ;; The fault: claims success but never hands over a response.
  (func (export "cmdhost_handle") (result i32)
    (i32.const 0))
)
