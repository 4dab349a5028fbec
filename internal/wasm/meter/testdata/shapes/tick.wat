;; the meter's shape: charged and checked at the entry, a loop calling the tick when spent (code.go, check)
;; A shape of check for BenchmarkCheckShape (check_bench_test.go): fib(n)
;; as a call tree, the cost per call of a check is what it measures.
(module
  (import "cmdhost_meter" "tick" (func $tick (param i64) (result i64)))
  (global $c (mut i64) (i64.const 0x4000000000000000))
  (func $fib (param $n i32) (result i32) (local $t i64)
    (global.set $c (local.tee $t (i64.sub (global.get $c) (i64.const 12))))
    (loop $l (if (i64.lt_s (local.get $t) (i64.const 0)) (then
      (global.set $c (local.tee $t (call $tick (local.get $t)))) (br $l))))
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "run") (param i32) (result i64) (i64.extend_i32_u (call $fib (local.get 0)))))
