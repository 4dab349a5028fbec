;; bad (at call time): cmdhost_handle writes a response with status 408, which is reserved for the host; loading succeeds, every call must fail as bad output.
(module
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))
  (import "cmdhost" "log"            (func $log            (param i32 i32 i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "badresp"}}}
  ;; 26 bytes at 16:
  ;;   01 04000000 01000000        version (tag 1, u32) = 1
  ;;   02 0c000000                 command (tag 2), nested envelope of 12 bytes:
  ;;     01 07000000 "badresp"       name (tag 1)
  (data (i32.const 16)
    "\01\04\00\00\00\01\00\00\00"
    "\02\0c\00\00\00"
    "\01\07\00\00\00\62\61\64\72\65\73\70")

  ;; abi.AppendResponse of Response{Status: 408}, 9 bytes at 64:
  ;;   01 04000000 98010000        status (tag 1, u32) = 408
  (data (i32.const 64)
    "\01\04\00\00\00\98\01\00\00")

  ;; The log line written when response_write answered ResultInvalid as it
  ;; must; 50 bytes at 128. The load tests look for it in the host log.
  (data (i32.const 128)
    "bad-badresp: response_write returned ResultInvalid")

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 26)) (i32.const 0)))

  ;; The fault: hands over status 408. The host must answer ResultInvalid
  ;; (-7) and record nothing; the guest then returns 0 as if all was well,
  ;; so only the host's refusal makes the call fail. Any other answer from
  ;; response_write traps (unreachable), which the tests see as KindTrap.
  (func (export "cmdhost_handle") (result i32)
    (if (i32.ne (call $response_write (i32.const 64) (i32.const 9)) (i32.const -7))
      (then (unreachable)))
    (call $log (i32.const 0) (i32.const 128) (i32.const 50))
    (i32.const 0))
)
