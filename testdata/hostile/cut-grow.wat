;; hostile: a memory.grow loop that fills its memory each round, for ever; the deadline must cut it (internal/wasm/cut_test.go).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "grow"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\09\00\00\00" "\01\04\00\00\00grow")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  ;; Never returns: grows its memory a page at a time and fills all of it,
  ;; each round (the grow fails once at the limit; the fill goes on).
  (func (export "cmdhost_handle") (result i32)
    (local $i i32)
    (loop $again
      (drop (memory.grow (i32.const 1)))
      (memory.fill (i32.const 0) (local.get $i) (i32.mul (memory.size) (i32.const 65536)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $again))
    (i32.const 0))
)
