;; hostile: writes its memory in a loop that never ends. A call of it
;; outlives any drain, so closing its plugin closes the module while the
;; guest still runs: the guest must stop at its next loop check, and its
;; memory must not be unmapped under it first (an mmap'd memory freed then
;; is a segmentation fault of the whole host).
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "memspin"}}}, 26 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\0c\00\00\00" "\01\07\00\00\00memspin")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 26)) (i32.const 0)))

  ;; Never returns: stores to every word of its first page, round and round.
  (func (export "cmdhost_handle") (result i32)
    (local $i i32)
    (loop $again
      (i32.store (i32.and (local.get $i) (i32.const 0xfffc)) (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br $again))
    (i32.const 0))
)
