;; hostile: logs "slow-load: describing" from cmdhost_describe, before it
;; describes itself. A test whose log handler blocks on that line holds the
;; plugin's load for as long as it likes, deterministically (no large module,
;; no sleep): the host's probes are checked while a plugin is loading. Its
;; one command, slow-load, answers 200 with no payload.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))
  (import "cmdhost" "log"            (func $log            (param i32 i32 i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "slow-load"}}}, 28 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0e\00\00\00" "\01\09\00\00\00slow-load")
  ;; The log line, 21 bytes.
  (data (i32.const 64) "slow-load: describing")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (call $log (i32.const 0) (i32.const 64) (i32.const 21))
    (i32.ne (call $describe (i32.const 16) (i32.const 28)) (i32.const 0)))

  ;; An empty response: 200, no payload.
  (func (export "cmdhost_handle") (result i32)
    (i32.ne (call $response_write (i32.const 0) (i32.const 0)) (i32.const 0)))
)
