;; hostile: recurses 100,000 calls deep and returns (frames of ~40 bytes,
;; ~56 once metered). wazero grows a call's stack as deep as it goes, by
;; doubling (to ~5 MiB here, and at most what a call may hold: 8 MiB, the
;; stack it grows from included, TestCallStackWithinBudget) and keeps it
;; with the function handle: the host must not keep that stack in its idle
;; instance after the call. cmdhost_handle answers the depth reached as a
;; 4-byte little-endian payload.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "deep"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00" "\02\09\00\00\00" "\01\04\00\00\00deep")
  ;; A response of one payload record (tag 6) of 4 bytes; $reply writes the value at 69.
  (data (i32.const 64) "\06\04\00\00\00")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  ;; $reply answers $v as the payload; 0 when the host took the response.
  (func $reply (param $v i32) (result i32)
    (i32.store (i32.const 69) (local.get $v))
    (i32.ne (call $response_write (i32.const 64) (i32.const 9)) (i32.const 0)))

  ;; $down recurses $n deep and returns $n.
  (func $down (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $down (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))

  ;; The fault.
  (func (export "cmdhost_handle") (result i32)
    (call $reply (call $down (i32.const 100000))))
)
