;; fsraw.wat — hostile test module: raw WASI file calls on preopen fds, with
;; no libc or Go runtime in between to clean paths or pick the preopen.
;;
;; Its one tool, "run", reads a script from the input's "s" string: steps
;; separated by ';', each CODE FD ':' PATH [' ' SECOND], where FD is one digit
;; (3 is the first grant, the preopens follow in grant order, the catch-all
;; "/" comes last). SECOND is FD2:PATH2 for rename (n) and link (l), and the
;; raw target for symlink (s). The answer lists CODE=ERRNO per step, with
;; ':' and what was read for r, R, d, D and k (bytes outside [A-Za-z0-9 ./_-]
;; shown as '.').
;;
;;   r  open following links, read 200 bytes     R  the same without following
;;   w  open O_CREAT|O_TRUNC for writing, write   a  open for append, write
;;   t  open for writing, set size 0              T  open read-only, set size 0
;;   F  open read-only, set times on the fd       A  open read-only, set append
;;   u  set times by path, following              U  the same without following
;;   g  stat by path, following                   G  the same without following
;;   d  open as a directory and list it           D  list FD itself (a preopen)
;;   m  mkdir    x  unlink    X  rmdir    k  readlink
;;   n  rename   l  link      s  symlink
;;
;; Memory: 0 the fixed strings, 4096 scratch (iovecs, results, stat),
;; 8192 read/list buffer, 12288 a step's output while its errno is
;; written, 16384 the answer, 65536 the request.
(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_size" (func $fd_filestat_set_size (param i32 i64) (result i32)))
  (import "wasi_snapshot_preview1" "fd_filestat_set_times" (func $fd_filestat_set_times (param i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_fdstat_set_flags" (func $fd_fdstat_set_flags (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_set_times" (func $path_filestat_set_times (param i32 i32 i32 i32 i64 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $path_unlink_file (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $path_remove_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_link" (func $path_link (param i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_symlink" (func $path_symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_readlink" (func $path_readlink (param i32 i32 i32 i32 i32 i32) (result i32)))

  (memory (export "memory") 2)

  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"fsraw\",\"version\":\"0.0.1\",\"tools\":[{\"name\":\"run\",\"description\":\"Runs raw WASI file calls.\",\"parameters\":{\"type\":\"object\"}}]}}\00")
  (data (i32.const 1024) "\"method\":\"init\"\00")
  (data (i32.const 1280) "\"s\":\"\00")
  (data (i32.const 1536) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\00")
  (data (i32.const 2048) "\"}]}}\00")
  (data (i32.const 2304) "PWNED\00")

  (global $out (mut i32) (i32.const 16384))

  (func (export "pi_abi_v1"))

  (func (export "pi_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.add (i32.const 65536) (local.get $n)))
    (block $done
      (loop $grow
        (br_if $done (i32.ge_u (i32.mul (memory.size) (i32.const 65536)) (local.get $need)))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1))
          (then (return (i32.const 0))))
        (br $grow)))
    (i32.const 65536))

  (func (export "pi_free") (param i32 i32))

  (func $strlen (param $p i32) (result i32)
    (local $i i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; find returns the offset just past the literal lit in [p, p+n), or -1.
  (func $find (param $p i32) (param $n i32) (param $lit i32) (result i32)
    (local $m i32) (local $i i32) (local $j i32)
    (local.set $m (call $strlen (local.get $lit)))
    (if (i32.gt_u (local.get $m) (local.get $n)) (then (return (i32.const -1))))
    (block $notfound
      (loop $at
        (br_if $notfound (i32.gt_u (local.get $i) (i32.sub (local.get $n) (local.get $m))))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $m))
              (then (return (i32.add (local.get $i) (local.get $m)))))
            (br_if $mismatch
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $p) (local.get $i)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $lit) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const -1))

  (func $byte (param $b i32)
    (i32.store8 (global.get $out) (local.get $b))
    (global.set $out (i32.add (global.get $out) (i32.const 1))))

  (func $lit (param $p i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (local.get $p))))
        (call $byte (i32.load8_u (local.get $p)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next))))

  (func $num (param $n i32)
    (if (i32.ge_u (local.get $n) (i32.const 10))
      (then (call $num (i32.div_u (local.get $n) (i32.const 10)))))
    (call $byte (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10)))))

  ;; safe copies n bytes, showing anything but [A-Za-z0-9 ./_-] as '.'.
  (func $safe (param $p i32) (param $n i32)
    (local $b i32)
    (block $end
      (loop $next
        (br_if $end (i32.le_s (local.get $n) (i32.const 0)))
        (local.set $b (i32.load8_u (local.get $p)))
        (if (i32.eqz
              (i32.or (i32.or
                (i32.and (i32.ge_u (local.get $b) (i32.const 97)) (i32.le_u (local.get $b) (i32.const 122)))
                (i32.and (i32.ge_u (local.get $b) (i32.const 65)) (i32.le_u (local.get $b) (i32.const 90))))
                (i32.or
                  (i32.and (i32.ge_u (local.get $b) (i32.const 45)) (i32.le_u (local.get $b) (i32.const 57)))
                  (i32.or (i32.eq (local.get $b) (i32.const 32)) (i32.eq (local.get $b) (i32.const 95))))))
          (then (local.set $b (i32.const 46))))
        (call $byte (local.get $b))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next))))

  ;; open opens path in fd; the new fd is at 4096 when the result is 0.
  (func $open (param $fd i32) (param $follow i32) (param $p i32) (param $n i32) (param $oflags i32) (param $rights i64) (param $fdflags i32) (result i32)
    (call $path_open (local.get $fd) (local.get $follow) (local.get $p) (local.get $n)
      (local.get $oflags) (local.get $rights) (i64.const 0) (local.get $fdflags) (i32.const 4096)))

  ;; readfd reads up to 200 bytes of fd into 8192 and writes ":" and them.
  (func $readfd (param $fd i32) (result i32)
    (local $e i32)
    (i32.store (i32.const 4104) (i32.const 8192))
    (i32.store (i32.const 4108) (i32.const 200))
    (local.set $e (call $fd_read (local.get $fd) (i32.const 4104) (i32.const 1) (i32.const 4112)))
    (if (i32.eqz (local.get $e))
      (then
        (call $byte (i32.const 58))
        (call $safe (i32.const 8192) (i32.load (i32.const 4112)))))
    (local.get $e))

  ;; writefd writes PWNED.
  (func $writefd (param $fd i32) (result i32)
    (i32.store (i32.const 4104) (i32.const 2304))
    (i32.store (i32.const 4108) (i32.const 5))
    (call $fd_write (local.get $fd) (i32.const 4104) (i32.const 1) (i32.const 4112)))

  ;; listfd lists fd and writes ":" and the names, comma separated.
  (func $listfd (param $fd i32) (result i32)
    (local $e i32) (local $used i32) (local $at i32) (local $len i32)
    (local.set $e (call $fd_readdir (local.get $fd) (i32.const 8192) (i32.const 4096) (i64.const 0) (i32.const 4112)))
    (if (local.get $e) (then (return (local.get $e))))
    (local.set $used (i32.load (i32.const 4112)))
    (call $byte (i32.const 58))
    (block $end
      (loop $next
        (br_if $end (i32.gt_u (i32.add (local.get $at) (i32.const 24)) (local.get $used)))
        (local.set $len (i32.load (i32.add (i32.const 8208) (local.get $at))))
        (br_if $end (i32.gt_u (i32.add (i32.add (local.get $at) (i32.const 24)) (local.get $len)) (local.get $used)))
        (call $safe (i32.add (i32.const 8216) (local.get $at)) (local.get $len))
        (call $byte (i32.const 44))
        (local.set $at (i32.add (local.get $at) (i32.add (i32.const 24) (local.get $len))))
        (br $next)))
    (i32.const 0))

  ;; with runs f (0 read, 1 write, 2 set size, 3 set times, 4 set append)
  ;; on the fd opened at 4096 when open succeeded, and closes it.
  (func $with (param $e i32) (param $f i32) (result i32)
    (local $fd i32)
    (if (local.get $e) (then (return (local.get $e))))
    (local.set $fd (i32.load (i32.const 4096)))
    (block $done
      (if (i32.eq (local.get $f) (i32.const 0)) (then (local.set $e (call $readfd (local.get $fd))) (br $done)))
      (if (i32.eq (local.get $f) (i32.const 1)) (then (local.set $e (call $writefd (local.get $fd))) (br $done)))
      (if (i32.eq (local.get $f) (i32.const 2)) (then (local.set $e (call $fd_filestat_set_size (local.get $fd) (i64.const 0))) (br $done)))
      (if (i32.eq (local.get $f) (i32.const 3)) (then (local.set $e (call $fd_filestat_set_times (local.get $fd) (i64.const 1000000000000000000) (i64.const 1000000000000000000) (i32.const 5))) (br $done)))
      (if (i32.eq (local.get $f) (i32.const 4)) (then (local.set $e (call $fd_fdstat_set_flags (local.get $fd) (i32.const 1))) (br $done)))
      (local.set $e (call $listfd (local.get $fd))))
    (drop (call $fd_close (local.get $fd)))
    (local.get $e))

  ;; step runs one step: code c on fd with path [p, p+n) and the second
  ;; argument fd2 / [q, q+m).
  (func $step (param $c i32) (param $fd i32) (param $p i32) (param $n i32) (param $fd2 i32) (param $q i32) (param $m i32) (result i32)
    ;; rights: 2 = fd_read, 64 = fd_write, 66 = both
    (if (i32.eq (local.get $c) (i32.const 114)) ;; r
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 2) (i32.const 0)) (i32.const 0)))))
    (if (i32.eq (local.get $c) (i32.const 82)) ;; R
      (then (return (call $with (call $open (local.get $fd) (i32.const 0) (local.get $p) (local.get $n) (i32.const 0) (i64.const 2) (i32.const 0)) (i32.const 0)))))
    (if (i32.eq (local.get $c) (i32.const 119)) ;; w: O_CREAT|O_TRUNC
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 9) (i64.const 66) (i32.const 0)) (i32.const 1)))))
    (if (i32.eq (local.get $c) (i32.const 97)) ;; a: FD_APPEND
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 64) (i32.const 1)) (i32.const 1)))))
    (if (i32.eq (local.get $c) (i32.const 116)) ;; t
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 64) (i32.const 0)) (i32.const 2)))))
    (if (i32.eq (local.get $c) (i32.const 84)) ;; T
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 2) (i32.const 0)) (i32.const 2)))))
    (if (i32.eq (local.get $c) (i32.const 70)) ;; F
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 2) (i32.const 0)) (i32.const 3)))))
    (if (i32.eq (local.get $c) (i32.const 65)) ;; A
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 0) (i64.const 2) (i32.const 0)) (i32.const 4)))))
    (if (i32.eq (local.get $c) (i32.const 100)) ;; d: O_DIRECTORY
      (then (return (call $with (call $open (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 2) (i64.const 0) (i32.const 0)) (i32.const 5)))))
    (if (i32.eq (local.get $c) (i32.const 68)) ;; D
      (then (return (call $listfd (local.get $fd)))))
    (if (i32.eq (local.get $c) (i32.const 117)) ;; u: set atim and mtim
      (then (return (call $path_filestat_set_times (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i64.const 1000000000000000000) (i64.const 1000000000000000000) (i32.const 5)))))
    (if (i32.eq (local.get $c) (i32.const 85)) ;; U
      (then (return (call $path_filestat_set_times (local.get $fd) (i32.const 0) (local.get $p) (local.get $n) (i64.const 1000000000000000000) (i64.const 1000000000000000000) (i32.const 5)))))
    (if (i32.eq (local.get $c) (i32.const 103)) ;; g
      (then (return (call $path_filestat_get (local.get $fd) (i32.const 1) (local.get $p) (local.get $n) (i32.const 4160)))))
    (if (i32.eq (local.get $c) (i32.const 71)) ;; G
      (then (return (call $path_filestat_get (local.get $fd) (i32.const 0) (local.get $p) (local.get $n) (i32.const 4160)))))
    (if (i32.eq (local.get $c) (i32.const 109)) ;; m
      (then (return (call $path_create_directory (local.get $fd) (local.get $p) (local.get $n)))))
    (if (i32.eq (local.get $c) (i32.const 120)) ;; x
      (then (return (call $path_unlink_file (local.get $fd) (local.get $p) (local.get $n)))))
    (if (i32.eq (local.get $c) (i32.const 88)) ;; X
      (then (return (call $path_remove_directory (local.get $fd) (local.get $p) (local.get $n)))))
    (if (i32.eq (local.get $c) (i32.const 110)) ;; n
      (then (return (call $path_rename (local.get $fd) (local.get $p) (local.get $n) (local.get $fd2) (local.get $q) (local.get $m)))))
    (if (i32.eq (local.get $c) (i32.const 108)) ;; l
      (then (return (call $path_link (local.get $fd) (i32.const 0) (local.get $p) (local.get $n) (local.get $fd2) (local.get $q) (local.get $m)))))
    (if (i32.eq (local.get $c) (i32.const 115)) ;; s: link at p pointing to q
      (then (return (call $path_symlink (local.get $q) (local.get $m) (local.get $fd) (local.get $p) (local.get $n)))))
    (if (i32.eq (local.get $c) (i32.const 107)) ;; k
      (then
        (local.set $c (call $path_readlink (local.get $fd) (local.get $p) (local.get $n) (i32.const 8192) (i32.const 1024) (i32.const 4112)))
        (if (i32.eqz (local.get $c))
          (then
            (call $byte (i32.const 58))
            (call $safe (i32.const 8192) (i32.load (i32.const 4112)))))
        (return (local.get $c))))
    (i32.const 9999))

  ;; upto returns the offset of the first of ' ', ';' or '"' at or after
  ;; p (bounded by end).
  (func $upto (param $p i32) (param $end i32) (result i32)
    (local $b i32)
    (block $stop
      (loop $next
        (br_if $stop (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $b (i32.load8_u (local.get $p)))
        (br_if $stop (i32.or (i32.or (i32.eq (local.get $b) (i32.const 32)) (i32.eq (local.get $b) (i32.const 59))) (i32.eq (local.get $b) (i32.const 34))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $next)))
    (local.get $p))

  (func $run (param $p i32) (param $end i32)
    (local $c i32) (local $fd i32) (local $a i32) (local $ae i32)
    (local $fd2 i32) (local $q i32) (local $qe i32)
    (local $at i32) (local $e i32) (local $len i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (i32.add (local.get $p) (i32.const 2)) (local.get $end)))
        (br_if $done (i32.eq (i32.load8_u (local.get $p)) (i32.const 34)))
        (local.set $c (i32.load8_u (local.get $p)))
        (local.set $fd (i32.sub (i32.load8_u (i32.add (local.get $p) (i32.const 1))) (i32.const 48)))
        (local.set $a (i32.add (local.get $p) (i32.const 3)))
        (local.set $ae (call $upto (local.get $a) (local.get $end)))
        (local.set $fd2 (local.get $fd))
        (local.set $q (local.get $ae))
        (local.set $qe (local.get $ae))
        (if (i32.eq (i32.load8_u (local.get $ae)) (i32.const 32))
          (then
            (local.set $q (i32.add (local.get $ae) (i32.const 1)))
            (if (i32.or (i32.eq (local.get $c) (i32.const 110)) (i32.eq (local.get $c) (i32.const 108)))
              (then
                (local.set $fd2 (i32.sub (i32.load8_u (local.get $q)) (i32.const 48)))
                (local.set $q (i32.add (local.get $q) (i32.const 2)))))
            (local.set $qe (call $upto (local.get $q) (local.get $end)))))
        (call $byte (local.get $c))
        (call $byte (i32.const 61))
        ;; The step writes what it read; move that behind the errno.
        (local.set $at (global.get $out))
        (local.set $e (call $step (local.get $c) (local.get $fd) (local.get $a) (i32.sub (local.get $ae) (local.get $a))
          (local.get $fd2) (local.get $q) (i32.sub (local.get $qe) (local.get $q))))
        (local.set $len (i32.sub (global.get $out) (local.get $at)))
        (memory.copy (i32.const 12288) (local.get $at) (local.get $len))
        (global.set $out (local.get $at))
        (call $num (local.get $e))
        (memory.copy (global.get $out) (i32.const 12288) (local.get $len))
        (global.set $out (i32.add (global.get $out) (local.get $len)))
        (call $byte (i32.const 59))
        (br_if $done (i32.ge_u (local.get $qe) (local.get $end)))
        (br_if $done (i32.eq (i32.load8_u (local.get $qe)) (i32.const 34)))
        (local.set $p (i32.add (local.get $qe) (i32.const 1)))
        (br $next))))

  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (local $s i32)
    (if (i32.ge_s (call $find (local.get $p) (local.get $n) (i32.const 1024)) (i32.const 0))
      (then (return (i64.or (i64.shl (i64.const 0) (i64.const 32)) (i64.extend_i32_u (call $strlen (i32.const 0)))))))
    (global.set $out (i32.const 16384))
    (call $lit (i32.const 1536))
    (local.set $s (call $find (local.get $p) (local.get $n) (i32.const 1280)))
    (if (i32.ge_s (local.get $s) (i32.const 0))
      (then (call $run (i32.add (local.get $p) (local.get $s)) (i32.add (local.get $p) (local.get $n)))))
    (call $lit (i32.const 2048))
    (i64.or
      (i64.shl (i64.const 16384) (i64.const 32))
      (i64.extend_i32_u (i32.sub (global.get $out) (i32.const 16384)))))
)
