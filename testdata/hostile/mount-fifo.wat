;; hostile: opens what a mount holds that is not a regular file or a
;; folder. A FIFO's open blocks in the kernel until a writer comes, where
;; no deadline or cancel reaches it; a device's open may do anything its
;; driver does.
;;
;; The test (internal/wasm/mount_test.go, TestMountRefusesFIFO) mounts a
;; temporary folder read-only as the guest's /data (fd 3, the first
;; preopen), holding the FIFO "fifo" and the file "file". The command
;; "open" opens "fifo", then "file", each for reading, reads up to 64
;; bytes of what opened and closes it; it answers a payload of the two
;; WASI errnos, little-endian u32 each (0: it opened and read), then the
;; bytes read.
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"   (func $fd_read   (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close"  (func $fd_close  (param i32) (result i32)))
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "open"}}}, 23 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00\02\09\00\00\00\01\04\00\00\00open")
  (data (i32.const 1024) "fifo")
  (data (i32.const 1029) "file")

  ;; Scratch: 512 the opened fd, 520 an iovec (ptr, len), 528 bytes read.
  ;; The response at 8192: a payload record (tag 6, u32 length), the two
  ;; errnos at 8197 and 8201, the bytes read from 8205 on ($cur).
  (global $cur (mut i32) (i32.const 8205))

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 23)) (i32.const 0)))

  ;; read opens the path p (n bytes) under fd 3 for reading (rights
  ;; fd_read), reads up to 64 bytes to $cur and closes it; its WASI errno.
  (func $read (param $p i32) (param $n i32) (result i32)
    (local $e i32)
    (local.set $e (call $path_open (i32.const 3) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0)
      (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 512)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (i32.const 520) (global.get $cur))
    (i32.store (i32.const 524) (i32.const 64))
    (i32.store (i32.const 528) (i32.const 0))
    (local.set $e (call $fd_read (i32.load (i32.const 512)) (i32.const 520) (i32.const 1) (i32.const 528)))
    (if (i32.eqz (local.get $e))
      (then (global.set $cur (i32.add (global.get $cur) (i32.load (i32.const 528))))))
    (drop (call $fd_close (i32.load (i32.const 512))))
    (local.get $e))

  (func (export "cmdhost_handle") (result i32)
    (global.set $cur (i32.const 8205))
    (i32.store (i32.const 8197) (call $read (i32.const 1024) (i32.const 4)))
    (i32.store (i32.const 8201) (call $read (i32.const 1029) (i32.const 4)))
    (i32.store8 (i32.const 8192) (i32.const 6))
    (i32.store (i32.const 8193) (i32.sub (global.get $cur) (i32.const 8197)))
    (i32.ne (call $response_write (i32.const 8192) (i32.sub (global.get $cur) (i32.const 8192))) (i32.const 0)))
)
