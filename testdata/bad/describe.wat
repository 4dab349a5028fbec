;; bad: hands describe bytes that do not decode (the command record claims 64 bytes, only 8 follow), so loading must fail.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; 22 bytes:
  ;;   01 04000000 01000000   version (tag 1, u32) = 1            -- fine
  ;;   02 40000000            command (tag 2), len 64             -- the fault:
  ;;     01 03000000 "abc"      only these 8 bytes follow
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\40\00\00\00"
    "\01\03\00\00\00\61\62\63")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  ;; Returns 0 whatever describe answered, so the host's own check of the
  ;; bytes is what must refuse the module.
  (func (export "cmdhost_describe") (result i32)
    (drop (call $describe (i32.const 16) (i32.const 22)))
    (i32.const 0))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
