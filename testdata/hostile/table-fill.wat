;; hostile: grows its table 4096 entries at a time, each new entry filled
;; with a function reference, until table.grow fails (-1) or the table holds
;; 2^24 entries (128 MiB of references in wazero; without a limit the loop
;; would run to 2^32). The table declares no maximum: the host must give it
;; its table limit, so that the growth stops there. cmdhost_handle answers
;; the table's final size as a 4-byte little-endian payload.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  (table $t 1 funcref)
  (elem declare func $filler)
  (func $filler)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "table-fill"}}}, 29 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0f\00\00\00" "\01\0a\00\00\00table-fill")
  ;; A response of one payload record (tag 6) of 4 bytes; $reply writes the value at 69.
  (data (i32.const 64) "\06\04\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 29)) (i32.const 0)))

  ;; $reply answers $v as the payload; 0 when the host took the response.
  (func $reply (param $v i32) (result i32)
    (i32.store (i32.const 69) (local.get $v))
    (i32.ne (call $response_write (i32.const 64) (i32.const 9)) (i32.const 0)))

  ;; The fault.
  (func (export "cmdhost_handle") (result i32)
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (table.size $t) (i32.const 0x1000000)))
        (br_if $done (i32.eq (table.grow $t (ref.func $filler) (i32.const 4096)) (i32.const -1)))
        (br $more)))
    (call $reply (table.size $t)))
)
