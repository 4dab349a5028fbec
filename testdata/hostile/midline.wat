;; hostile: writes its failure message to stderr without ending the line,
;; then traps, the way a C guest's assert or fputs before abort() dies.
;; The line never ends: the host must still quote it in the call's error
;; and log it, not keep it for a next call that the discarded instance
;; never runs.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "cmdhost" "describe" (func $describe (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "midline"}}}, 26 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0c\00\00\00" "\01\07\00\00\00midline")
  ;; an iovec {128, 41} at 64, and the message at 128
  (data (i32.const 64) "\80\00\00\00\29\00\00\00")
  (data (i32.const 128) "Assertion failed: n > 0 (kit.c: trap: 12)")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 26)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (drop (call $fd_write (i32.const 2) (i32.const 64) (i32.const 1) (i32.const 96)))
    unreachable)
)
