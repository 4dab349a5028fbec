;; bad: the one command, "t", declares the request topic pattern "{a}/{b}",
;; which would subscribe to every two-level topic, the host's own included:
;; the module loads, but the host refuses to serve it (plugins.CheckTopics),
;; and `cmdhost plugin validate` says so.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of
  ;;   Description{Version: 1, Commands: {{Name: "t", Topic: "{a}/{b}"}}}
  ;; 32 bytes:
  ;;   01 04000000 01000000       version (tag 1, u32) = 1
  ;;   02 12000000                command (tag 2), nested envelope of 18 bytes:
  ;;     01 01000000 "t"            name (tag 1)
  ;;     06 07000000 "{a}/{b}"      topic (tag 6)
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\12\00\00\00"
    "\01\01\00\00\00t"
    "\06\07\00\00\00{a}/{b}")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 32)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
