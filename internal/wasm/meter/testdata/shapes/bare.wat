;; no check: the baseline
;; A shape of check for BenchmarkCheckShape (check_bench_test.go): fib(n)
;; as a call tree, the cost per call of a check is what it measures.
(module
  (func $fib (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 2))
      (then (local.get $n))
      (else (i32.add (call $fib (i32.sub (local.get $n) (i32.const 1)))
                     (call $fib (i32.sub (local.get $n) (i32.const 2)))))))
  (func (export "run") (param i32) (result i64) (i64.extend_i32_u (call $fib (local.get 0)))))
