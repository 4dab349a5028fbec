;; Sample kernels for the meter's tests: every form of function index the
;; rewriter renumbers, and each kernel an export of no parameters.
(module
  (type $ii (func (param i32) (result i32)))
  (import "env" "add" (func $add (param i32 i32) (result i32)))
  (memory 1)
  (table 4 funcref)
  (global $fp (mut funcref) (ref.func $fib))
  (global $n (mut i32) (i32.const 0))
  (elem (i32.const 0) $fib $sq)
  (elem funcref (ref.func $sq) (ref.func $fib))
  (elem declare func $tail)
  (start $init)
  (func $init (global.set $n (i32.const 7)))
  (func $fib (type $ii) (param $x i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $x) (i32.const 2))
      (then (local.get $x))
      (else (call $add (call $fib (i32.sub (local.get $x) (i32.const 1)))
                       (call $fib (i32.sub (local.get $x) (i32.const 2)))))))
  (func $sq (type $ii) (i32.mul (local.get 0) (local.get 0)))
  (func $tail (param i32 i32) (result i32)
    (if (result i32) (i32.eqz (local.get 0)) (then (local.get 1))
      (else (return_call $tail (i32.sub (local.get 0) (i32.const 1)) (i32.add (local.get 1) (i32.const 3))))))
  (func (export "fib") (result i64) (i64.extend_i32_u (call $fib (i32.const 20))))
  (func (export "indirect") (result i64)
    (i64.extend_i32_u (i32.add
      (call_indirect (type $ii) (i32.const 9) (i32.const 1))
      (call_indirect (type $ii) (i32.const 5) (i32.const 0)))))
  (func (export "global") (result i64)
    (table.set 0 (i32.const 3) (global.get $fp))
    (i64.extend_i32_u (call_indirect (type $ii) (i32.const 10) (i32.const 3))))
  (func (export "tail") (result i64) (i64.extend_i32_u (call $tail (i32.const 100000) (i32.const 0))))
  (func (export "loop") (result i64) (local $i i32) (local $h i64)
    (loop $l
      (local.set $h (i64.add (i64.mul (local.get $h) (i64.const 31)) (i64.extend_i32_u (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100000))))
    (local.get $h))
  (func (export "nested") (result i64) (local $i i32) (local $j i32) (local $s i64)
    (block $out
      (loop $a
        (local.set $j (i32.const 0))
        (loop $b
          (local.set $s (i64.add (local.get $s) (i64.extend_i32_u (i32.mul (local.get $i) (local.get $j)))))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br_if $b (i32.lt_u (local.get $j) (i32.const 300))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br_table $a $out (i32.ge_u (local.get $i) (i32.const 200)))))
    (local.get $s))
  ;; A loop that calls a function of the module first thing each round,
  ;; as clang compiles fib: the loop relies on the callee's check.
  (func (export "loopcall") (result i64) (local $i i32) (local $s i32)
    (loop $l
      (local.set $s (i32.add (local.get $s) (call $sq (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100000))))
    (i64.extend_i32_u (local.get $s)))
;; Reached only by direct calls, so charged at their call sites (the
  ;; meter's own weight rule): $dfib, fib as clang compiles it (a loop
  ;; around one of the calls), whose entry then only checks; $tree, a call
  ;; tree with no loop; $leaf, which calls nothing and has no entry code,
  ;; called first thing in a loop (whose check must stay).
  (func $dfib (param $n i32) (result i32) (local $acc i32)
    (block $done
      (br_if $done (i32.lt_u (local.get $n) (i32.const 2)))
      (loop $l
        (local.set $acc (i32.add (local.get $acc) (call $dfib (i32.sub (local.get $n) (i32.const 1)))))
        (local.set $n (i32.sub (local.get $n) (i32.const 2)))
        (br_if $l (i32.gt_u (local.get $n) (i32.const 1)))))
    (i32.add (local.get $acc) (local.get $n)))
  (func $tree (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n)) (then (i32.const 1))
      (else (i32.add (call $tree (i32.sub (local.get $n) (i32.const 1)))
                     (call $tree (i32.sub (local.get $n) (i32.const 1)))))))
  (func $leaf (param i32) (result i32) (i32.add (i32.mul (local.get 0) (i32.const 3)) (i32.const 1)))
  (func (export "dfib") (result i64) (i64.extend_i32_u (call $dfib (i32.const 20))))
  (func (export "tree") (result i64) (i64.extend_i32_u (call $tree (i32.const 14))))
  (func (export "leafloop") (result i64) (local $i i32) (local $s i32)
    (loop $l
      (local.set $s (i32.add (local.get $s) (call $leaf (local.get $i))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 100000))))
    (i64.extend_i32_u (local.get $s)))
  (func (export "bulk") (result i64)
    (memory.fill (i32.const 0) (i32.const 7) (i32.const 65536))
    (memory.copy (i32.const 100) (i32.const 0) (i32.const 1000))
    (i64.load (i32.const 500)))
  (func (export "simd") (result i64)
    (i64x2.extract_lane 1 (i64x2.add (v128.const i64x2 1 2) (i64x2.splat (i64.const 40)))))
  (func (export "multi") (result i64)
    (i64.const 1) (i64.const 2) (block (param i64 i64) (result i64) (i64.add)))
  (func (export "start") (result i64) (i64.extend_i32_u (global.get $n)))
  (func (export "trap") (result i64) (unreachable))
)
