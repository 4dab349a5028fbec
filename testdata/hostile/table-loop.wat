;; hostile: copies 65,534 entries of a table of 65,535 (within the
;; default table limit) one place down, round
;; after round, for the fuel budget to stop (it never answers).
;; TestFuelStopsTableLoops compares it with its twin, memory-loop.wat (65,535 bytes of memory):
;; a bulk table operation was charged one unit of fuel, as any
;; instruction, so a budget that stopped the memory loop in 0.03-0.08 s let
;; the table loop run 18-44 s.
(module
  (import "cmdhost" "describe" (func $describe (param i32 i32) (result i32)))

  (memory (export "memory") 1)
  (table $t 65535 funcref)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "loop"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\09\00\00\00" "\01\04\00\00\00loop")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  (func (export "cmdhost_handle") (result i32)
    (loop $more
      (table.copy $t $t (i32.const 0) (i32.const 1) (i32.const 65534))
      (br $more))
    (i32.const 1))
)
