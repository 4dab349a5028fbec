;; hostile: a deep recursion (20,000 frames, ~1 MiB of stack, grown first) that never returns; the deadline must cut it (internal/wasm/cut_test.go).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "deep"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\09\00\00\00" "\01\04\00\00\00deep")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  ;; Recurses 20,000 deep, then runs an exponential call tree there; $n
  ;; levels of the tree at the bottom (0 returns at once).
  (func $tree (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (i32.add (call $tree (i32.sub (local.get $n) (i32.const 1)))
                     (call $tree (i32.sub (local.get $n) (i32.const 1)))))))
  (func $down (param $n i32) (param $levels i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (call $tree (local.get $levels)))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1)) (local.get $levels)) (i32.const 1)))))
  ;; The first descent grows the call's stack (wazero copies it each time
  ;; it doubles, a step no deadline cuts) and returns; the second finds it
  ;; grown and never returns.
  (func (export "cmdhost_handle") (result i32)
    (drop (call $down (i32.const 20000) (i32.const 0)))
    (drop (call $down (i32.const 20000) (i32.const 60)))
    (i32.const 0))
)
