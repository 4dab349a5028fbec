;; the counter passed to each call and returned with its result (a register), checked at the entry
;; A shape of check for BenchmarkCheckShape (check_bench_test.go): fib(n)
;; as a call tree, the cost per call of a check is what it measures.
(module
  (import "cmdhost_meter" "tick" (func $tick (param i64) (result i64)))
  (global $c (mut i64) (i64.const 0x4000000000000000))
  (func $fib (param $n i32) (param $c i64) (result i32 i64) (local $a i32)
    (local.set $c (i64.sub (local.get $c) (i64.const 12)))
    (loop $l (if (i64.lt_s (local.get $c) (i64.const 0)) (then
      (local.set $c (call $tick (local.get $c))) (br $l))))
    (if (i32.lt_u (local.get $n) (i32.const 2))
      (then (return (local.get $n) (local.get $c))))
    (call $fib (i32.sub (local.get $n) (i32.const 1)) (local.get $c))
    (local.set $c)
    (local.set $a)
    (call $fib (i32.sub (local.get $n) (i32.const 2)) (local.get $c))
    (local.set $c)
    (local.get $a)
    (i32.add)
    (local.get $c))
  (func (export "run") (param i32) (result i64)
    (call $fib (local.get 0) (global.get $c))
    (global.set $c)
    (i64.extend_i32_u)))
