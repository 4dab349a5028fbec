;; hostile: an exponential call tree with no loop (2^60 calls); the deadline must cut it (internal/wasm/cut_test.go).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "tree"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\09\00\00\00" "\01\04\00\00\00tree")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  ;; 2^60 calls and no loop.
  (func $tree (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 1))
      (else (i32.add (call $tree (i32.sub (local.get $n) (i32.const 1)))
                     (call $tree (i32.sub (local.get $n) (i32.const 1)))))))
  (func (export "cmdhost_handle") (result i32)
    (drop (call $tree (i32.const 60)))
    (i32.const 0))
)
