;; hostile: tries to leave its mount through WASI file calls -- symlinks
;; it makes (path_symlink with a target up and out), symlinks the operator
;; left in the folder (planted -> an absolute folder outside, planted-rel ->
;; ../outside), ".." in paths, hard links (path_link) and renames
;; (path_rename) across the mount's edge -- and reports what it could do.
;;
;; The test (internal/wasm/mount_test.go) mounts T/m as the guest's /data (fd 3,
;; the first preopen) beside T/outside/secret, and plants m/planted ->
;; T/outside, m/planted-rel -> ../outside and the folder m/sub/inner.
;;
;; The command "escape" runs every step below, each on its own, and
;; answers a payload of one little-endian u32 per step, the step's WASI
;; errno (0: it worked), followed by every byte its reads got (each read
;; at most 64 bytes). The steps:
;;
;;    0  symlink esc -> ..: a link up out of the mount (refused: targets must point down)
;;    1  read esc/outside/secret: read the secret through the guest's link
;;    2  write esc/outside/secret (oflags 0): overwrite the secret through the guest's link
;;    3  write esc/outside/created (oflags 1): create a file outside through the guest's link
;;    4  symlink esc2 -> ../../../../../../../../../../..: the issue's link to the host's root
;;    5  read esc2/etc/hostname: read the host's /etc/hostname through it
;;    6  read planted/secret: read the secret through the operator's absolute link planted -> OUTSIDE
;;    7  write planted/secret (oflags 0): overwrite the secret through planted
;;    8  read planted-rel/secret: read the secret through the operator's relative link planted-rel -> ../outside
;;    9  read ../outside/secret: a path with .. out of the mount
;;   10  read sub/../../outside/secret: a path with .. out of the mount, after a folder
;;   11  read planted/../outside/secret: a .. after a link out
;;   12  link stolen to planted/secret: hard-link the secret into the mount through planted
;;   13  read stolen: read the hard link
;;   14  link plantedcopy to planted: hard-link the link planted itself (allowed: the copy is no more followable)
;;   15  read plantedcopy/secret: read the secret through the copy
;;   16  rename planted/secret -> moved-in: move the secret into the mount
;;   17  write inside (oflags 1): create a file inside the mount (allowed in a writable mount)
;;   18  rename inside -> planted/moved-out: move a file out of the mount through planted
;;   19  rename inside -> esc/outside/moved-out: move a file out through the guest's link
;;   20  read inside: the file is still inside
;;   21  symlink down -> sub/inner: a link that points down (allowed in a writable mount)
;;   22  read down: read through it (allowed)
(module
  (import "wasi_snapshot_preview1" "path_open"    (func $path_open    (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read"      (func $fd_read      (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"     (func $fd_write     (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close"     (func $fd_close     (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link"    (func $path_link    (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename"  (func $path_rename  (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cmdhost" "describe"       (func $describe       (param i32 i32) (result i32)))
  (import "cmdhost" "response_write" (func $response_write (param i32 i32) (result i32)))

  (memory (export "memory") 1)

  ;; abi.AppendDescription of Description{Version: 1, Commands: {{Name: "escape"}}}, 25 bytes.
  (data (i32.const 16) "\01\04\00\00\00\01\00\00\00\02\0b\00\00\00\01\06\00\00\00\65\73\63\61\70\65")
  ;; The paths and link targets, each at its own offset.
  (data (i32.const 1024) "..")
  (data (i32.const 1027) "esc")
  (data (i32.const 1031) "esc/outside/secret")
  (data (i32.const 1050) "esc/outside/created")
  (data (i32.const 1070) "../../../../../../../../../../..")
  (data (i32.const 1103) "esc2")
  (data (i32.const 1108) "esc2/etc/hostname")
  (data (i32.const 1126) "planted/secret")
  (data (i32.const 1141) "planted-rel/secret")
  (data (i32.const 1160) "../outside/secret")
  (data (i32.const 1178) "sub/../../outside/secret")
  (data (i32.const 1203) "planted/../outside/secret")
  (data (i32.const 1229) "stolen")
  (data (i32.const 1236) "planted")
  (data (i32.const 1244) "plantedcopy")
  (data (i32.const 1256) "plantedcopy/secret")
  (data (i32.const 1275) "moved-in")
  (data (i32.const 1284) "inside")
  (data (i32.const 1291) "planted/moved-out")
  (data (i32.const 1309) "esc/outside/moved-out")
  (data (i32.const 1331) "sub/inner")
  (data (i32.const 1341) "down")
  (data (i32.const 1346) "PWNED")

  ;; Scratch: 512 the opened fd, 520 an iovec (ptr, len), 528 bytes moved.
  ;; The response at 8192: a payload record (tag 6, u32 length), the
  ;; errno table at 8197, the bytes read from 8289.
  (global $cur (mut i32) (i32.const 8289))

  (func (export "cmdhost_abi_version") (result i32)
    (i32.const 1))

  (func (export "cmdhost_describe") (result i32)
    (i32.ne (call $describe (i32.const 16) (i32.const 25)) (i32.const 0)))

  ;; $open opens path (following links) under fd 3, for writing when $w;
  ;; the fd is at 512.
  (func $open (param $p i32) (param $n i32) (param $oflags i32) (param $w i32) (result i32)
    (call $path_open (i32.const 3) (i32.const 1) (local.get $p) (local.get $n) (local.get $oflags)
      (select (i64.const 66) (i64.const 2) (local.get $w)) (i64.const 0) (i32.const 0) (i32.const 512)))

  ;; $read reads at most 64 bytes of path to the cursor and moves it on.
  (func $read (param $p i32) (param $n i32) (result i32)
    (local $e i32)
    (local.set $e (call $open (local.get $p) (local.get $n) (i32.const 0) (i32.const 0)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (i32.const 520) (global.get $cur))
    (i32.store (i32.const 524) (i32.const 64))
    (i32.store (i32.const 528) (i32.const 0))
    (local.set $e (call $fd_read (i32.load (i32.const 512)) (i32.const 520) (i32.const 1) (i32.const 528)))
    (if (i32.eqz (local.get $e))
      (then (global.set $cur (i32.add (global.get $cur) (i32.load (i32.const 528))))))
    (drop (call $fd_close (i32.load (i32.const 512))))
    (local.get $e))

  ;; $write writes "PWNED" to path, opened with $oflags (1: create).
  (func $write (param $p i32) (param $n i32) (param $oflags i32) (result i32)
    (local $e i32)
    (local.set $e (call $open (local.get $p) (local.get $n) (local.get $oflags) (i32.const 1)))
    (if (local.get $e) (then (return (local.get $e))))
    (i32.store (i32.const 520) (i32.const 1346))
    (i32.store (i32.const 524) (i32.const 5))
    (local.set $e (call $fd_write (i32.load (i32.const 512)) (i32.const 520) (i32.const 1) (i32.const 528)))
    (drop (call $fd_close (i32.load (i32.const 512))))
    (local.get $e))

  ;; $rec stores step $i's errno in the table.
  (func $rec (param $i i32) (param $e i32)
    (i32.store (i32.add (i32.const 8197) (i32.shl (local.get $i) (i32.const 2))) (local.get $e)))

  (func (export "cmdhost_handle") (result i32)
    (global.set $cur (i32.const 8289))
    (call $rec (i32.const 0) (call $path_symlink (i32.const 1024) (i32.const 2) (i32.const 3) (i32.const 1027) (i32.const 3))) ;; symlink esc -> ..
    (call $rec (i32.const 1) (call $read (i32.const 1031) (i32.const 18))) ;; read esc/outside/secret
    (call $rec (i32.const 2) (call $write (i32.const 1031) (i32.const 18) (i32.const 0))) ;; write esc/outside/secret (oflags 0)
    (call $rec (i32.const 3) (call $write (i32.const 1050) (i32.const 19) (i32.const 1))) ;; write esc/outside/created (oflags 1)
    (call $rec (i32.const 4) (call $path_symlink (i32.const 1070) (i32.const 32) (i32.const 3) (i32.const 1103) (i32.const 4))) ;; symlink esc2 -> ../../../../../../../../../../..
    (call $rec (i32.const 5) (call $read (i32.const 1108) (i32.const 17))) ;; read esc2/etc/hostname
    (call $rec (i32.const 6) (call $read (i32.const 1126) (i32.const 14))) ;; read planted/secret
    (call $rec (i32.const 7) (call $write (i32.const 1126) (i32.const 14) (i32.const 0))) ;; write planted/secret (oflags 0)
    (call $rec (i32.const 8) (call $read (i32.const 1141) (i32.const 18))) ;; read planted-rel/secret
    (call $rec (i32.const 9) (call $read (i32.const 1160) (i32.const 17))) ;; read ../outside/secret
    (call $rec (i32.const 10) (call $read (i32.const 1178) (i32.const 24))) ;; read sub/../../outside/secret
    (call $rec (i32.const 11) (call $read (i32.const 1203) (i32.const 25))) ;; read planted/../outside/secret
    (call $rec (i32.const 12) (call $path_link (i32.const 3) (i32.const 1) (i32.const 1126) (i32.const 14) (i32.const 3) (i32.const 1229) (i32.const 6))) ;; link stolen to planted/secret
    (call $rec (i32.const 13) (call $read (i32.const 1229) (i32.const 6))) ;; read stolen
    (call $rec (i32.const 14) (call $path_link (i32.const 3) (i32.const 0) (i32.const 1236) (i32.const 7) (i32.const 3) (i32.const 1244) (i32.const 11))) ;; link plantedcopy to planted
    (call $rec (i32.const 15) (call $read (i32.const 1256) (i32.const 18))) ;; read plantedcopy/secret
    (call $rec (i32.const 16) (call $path_rename (i32.const 3) (i32.const 1126) (i32.const 14) (i32.const 3) (i32.const 1275) (i32.const 8))) ;; rename planted/secret -> moved-in
    (call $rec (i32.const 17) (call $write (i32.const 1284) (i32.const 6) (i32.const 1))) ;; write inside (oflags 1)
    (call $rec (i32.const 18) (call $path_rename (i32.const 3) (i32.const 1284) (i32.const 6) (i32.const 3) (i32.const 1291) (i32.const 17))) ;; rename inside -> planted/moved-out
    (call $rec (i32.const 19) (call $path_rename (i32.const 3) (i32.const 1284) (i32.const 6) (i32.const 3) (i32.const 1309) (i32.const 21))) ;; rename inside -> esc/outside/moved-out
    (call $rec (i32.const 20) (call $read (i32.const 1284) (i32.const 6))) ;; read inside
    (call $rec (i32.const 21) (call $path_symlink (i32.const 1331) (i32.const 9) (i32.const 3) (i32.const 1341) (i32.const 4))) ;; symlink down -> sub/inner
    (call $rec (i32.const 22) (call $read (i32.const 1341) (i32.const 4))) ;; read down
    (i32.store8 (i32.const 8192) (i32.const 6))
    (i32.store (i32.const 8193) (i32.sub (global.get $cur) (i32.const 8197)))
    (i32.ne (call $response_write (i32.const 8192) (i32.sub (global.get $cur) (i32.const 8192))) (i32.const 0)))
)
