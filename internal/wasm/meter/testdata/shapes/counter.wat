;; the counter charged at the entry, never checked: the floor of any count kept in memory
;; A shape of check for BenchmarkCheckShape (check_bench_test.go): fib(n)
;; as a call tree, the cost per call of a check is what it measures.
(module
  (import "cmdhost_meter" "tick" (func $tick (param i64) (result i64)))
  (global $c (mut i64) (i64.const 0x4000000000000000))
  (func $fib (param $n i32) (result i32)
    (global.set $c (i64.sub (global.get $c) (i64.const 12)))
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "run") (param i32) (result i64) (i64.extend_i32_u (call $fib (local.get 0)))))
