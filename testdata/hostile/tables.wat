;; hostile: three tables without a maximum, each grown by 2^20 entries. The
;; table limit bounds the entries of all an instance's tables together: the
;; host must lower the maxima so that the three grown tables fit in it.
;; cmdhost_handle answers the sum of the three sizes as a 4-byte
;; little-endian payload.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  (table $a 1 funcref)
  (table $b 1 funcref)
  (table $c 1 externref)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "tables"}}}, 25 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0b\00\00\00" "\01\06\00\00\00tables")
  ;; A response of one payload record (tag 6) of 4 bytes; $reply writes the value at 69.
  (data (i32.const 64) "\06\04\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 25)) (i32.const 0)))

  ;; $reply answers $v as the payload; 0 when the host took the response.
  (func $reply (param $v i32) (result i32)
    (i32.store (i32.const 69) (local.get $v))
    (i32.ne (call $response_write (i32.const 64) (i32.const 9)) (i32.const 0)))

  ;; The fault: each grow fails (-1) or succeeds on its own; the sizes tell.
  (func (export "cmdhost_handle") (result i32)
    (drop (table.grow $a (ref.null func) (i32.const 0x100000)))
    (drop (table.grow $b (ref.null func) (i32.const 0x100000)))
    (drop (table.grow $c (ref.null extern) (i32.const 0x100000)))
    (call $reply (i32.add (i32.add (table.size $a) (table.size $b)) (table.size $c))))
)
