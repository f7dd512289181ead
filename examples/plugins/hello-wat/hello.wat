;; hello-wat: a pi extension written by hand in WebAssembly text, to show that
;; the ABI (docs/abi.md) needs no SDK. It has one tool, hello {name}, that
;; answers "Hello, NAME!". Assemble with:  wat2wasm hello.wat -o hello-wat.wasm
;;
;; Requests are found by searching for fixed byte strings, which is enough
;; here because the host writes compact JSON and the tool's schema allows
;; only one property, "name". The name's JSON string content is copied into
;; the answer as is (it is already escaped).
(module
  (import "pi" "log" (func $log (param i32 i32 i32)))

  (memory (export "memory") 2)

  ;; NUL-terminated constants.
  (data (i32.const 1024) "\"method\":\"init\"\00")
  (data (i32.const 1056) "\"method\":\"tool.execute\"\00")
  (data (i32.const 1088) "\"input\":\00")
  (data (i32.const 1104) "\"name\"\00")
  (data (i32.const 1120) "hello-wat: init\00")
  (data (i32.const 1152) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"Hello, \00")
  (data (i32.const 1280) "!\"}]}}\00")
  (data (i32.const 1296) "{\"ok\":false,\"error\":{\"message\":\"hello-wat: unknown method\"}}\00")
  (data (i32.const 1376) "{\"ok\":false,\"error\":{\"message\":\"hello-wat: the input has no name\"}}\00")
  (data (i32.const 2048)
    "{\"ok\":true,\"result\":{\"name\":\"hello-wat\",\"version\":\"0.1.0\","
    "\"description\":\"A tool written by hand in WebAssembly text\","
    "\"tools\":[{\"name\":\"hello\",\"label\":\"Hello\","
    "\"description\":\"Greet someone by name.\","
    "\"parameters\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Who to greet\"}},"
    "\"required\":[\"name\"],\"additionalProperties\":false}}],\"hooks\":[]}}\00")

  ;; The heap starts after the constants; buffers are bumped from it and the
  ;; whole heap is reset when the last live buffer is freed.
  (global $heap_base i32 (i32.const 8192))
  (global $heap (mut i32) (i32.const 8192))
  (global $live (mut i32) (i32.const 0))

  (func (export "pi_abi_v1"))

  (func $strlen (param $p i32) (result i32)
    (local $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $n)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $next)))
    (local.get $n))

  (func $copy (param $dst i32) (param $src i32) (param $n i32)
    (block $done
      (loop $next
        (br_if $done (i32.eqz (local.get $n)))
        (i32.store8 (local.get $dst) (i32.load8_u (local.get $src)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 1)))
        (local.set $src (i32.add (local.get $src) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $next))))

  ;; $find returns the address of the first occurrence of the NUL-terminated
  ;; needle in [p, p+n), or -1.
  (func $find (param $p i32) (param $n i32) (param $needle i32) (result i32)
    (local $m i32) (local $i i32) (local $j i32)
    (local.set $m (call $strlen (local.get $needle)))
    (block $notfound
      (loop $at
        (br_if $notfound (i32.gt_s (i32.add (local.get $i) (local.get $m)) (local.get $n)))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $m))
              (then (return (i32.add (local.get $p) (local.get $i)))))
            (br_if $mismatch
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $p) (local.get $i)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $needle) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const -1))

  (func $alloc (export "pi_alloc") (param $size i32) (result i32)
    (local $p i32) (local $end i32) (local $have i32)
    ;; align to 8
    (local.set $p (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (local.set $end (i32.add (local.get $p) (local.get $size)))
    (if (i32.lt_u (local.get $end) (local.get $p)) (then (return (i32.const 0))))
    (local.set $have (i32.mul (memory.size) (i32.const 65536)))
    (if (i32.gt_u (local.get $end) (local.get $have))
      (then
        (if (i32.eq
              (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have)) (i32.const 65535)) (i32.const 16)))
              (i32.const -1))
          (then (return (i32.const 0))))))
    (global.set $heap (local.get $end))
    (global.set $live (i32.add (global.get $live) (i32.const 1)))
    (local.get $p))

  (func (export "pi_free") (param $ptr i32) (param $size i32)
    (if (i32.lt_u (local.get $ptr) (global.get $heap_base)) (then (return)))
    (global.set $live (i32.sub (global.get $live) (i32.const 1)))
    (if (i32.le_s (global.get $live) (i32.const 0))
      (then
        (global.set $live (i32.const 0))
        (global.set $heap (global.get $heap_base)))))

  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
      (i64.extend_i32_u (local.get $n))))

  ;; $answer copies a NUL-terminated constant into a fresh buffer.
  (func $answer (param $s i32) (result i64)
    (local $n i32) (local $out i32)
    (local.set $n (call $strlen (local.get $s)))
    (local.set $out (call $alloc (local.get $n)))
    (call $copy (local.get $out) (local.get $s) (local.get $n))
    (call $pack (local.get $out) (local.get $n)))

  (func $is_space (param $c i32) (result i32)
    (i32.or
      (i32.or (i32.eq (local.get $c) (i32.const 32)) (i32.eq (local.get $c) (i32.const 9)))
      (i32.or (i32.eq (local.get $c) (i32.const 10)) (i32.eq (local.get $c) (i32.const 13)))))

  (func $hello (param $p i32) (param $n i32) (result i64)
    (local $end i32) (local $k i32) (local $start i32) (local $len i32)
    (local $pre i32) (local $suf i32) (local $out i32) (local $c i32)
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (local.set $k (call $find (local.get $p) (local.get $n) (i32.const 1088)))
    (if (i32.lt_s (local.get $k) (i32.const 0)) (then (return (call $answer (i32.const 1376)))))
    (local.set $k (call $find (local.get $k) (i32.sub (local.get $end) (local.get $k)) (i32.const 1104)))
    (if (i32.lt_s (local.get $k) (i32.const 0)) (then (return (call $answer (i32.const 1376)))))
    (local.set $k (i32.add (local.get $k) (i32.const 6)))
    ;; skip spaces, a colon, spaces, then expect the opening quote
    (block $s1 (loop $l1
      (br_if $s1 (i32.ge_u (local.get $k) (local.get $end)))
      (br_if $s1 (i32.eqz (call $is_space (i32.load8_u (local.get $k)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $l1)))
    (if (i32.or (i32.ge_u (local.get $k) (local.get $end))
                (i32.ne (i32.load8_u (local.get $k)) (i32.const 58)))
      (then (return (call $answer (i32.const 1376)))))
    (local.set $k (i32.add (local.get $k) (i32.const 1)))
    (block $s2 (loop $l2
      (br_if $s2 (i32.ge_u (local.get $k) (local.get $end)))
      (br_if $s2 (i32.eqz (call $is_space (i32.load8_u (local.get $k)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $l2)))
    (if (i32.or (i32.ge_u (local.get $k) (local.get $end))
                (i32.ne (i32.load8_u (local.get $k)) (i32.const 34)))
      (then (return (call $answer (i32.const 1376)))))
    (local.set $k (i32.add (local.get $k) (i32.const 1)))
    (local.set $start (local.get $k))
    ;; scan the string content; a backslash escapes the next byte
    (block $closed (loop $scan
      (if (i32.ge_u (local.get $k) (local.get $end))
        (then (return (call $answer (i32.const 1376)))))
      (local.set $c (i32.load8_u (local.get $k)))
      (br_if $closed (i32.eq (local.get $c) (i32.const 34)))
      (if (i32.eq (local.get $c) (i32.const 92))
        (then (local.set $k (i32.add (local.get $k) (i32.const 1)))))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $scan)))
    (local.set $len (i32.sub (local.get $k) (local.get $start)))
    (local.set $pre (call $strlen (i32.const 1152)))
    (local.set $suf (call $strlen (i32.const 1280)))
    (local.set $out (call $alloc (i32.add (i32.add (local.get $pre) (local.get $len)) (local.get $suf))))
    (if (i32.eqz (local.get $out)) (then (unreachable)))
    (call $copy (local.get $out) (i32.const 1152) (local.get $pre))
    (call $copy (i32.add (local.get $out) (local.get $pre)) (local.get $start) (local.get $len))
    (call $copy (i32.add (i32.add (local.get $out) (local.get $pre)) (local.get $len)) (i32.const 1280) (local.get $suf))
    (call $pack (local.get $out) (i32.add (i32.add (local.get $pre) (local.get $len)) (local.get $suf))))

  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (if (i32.ge_s (call $find (local.get $p) (local.get $n) (i32.const 1024)) (i32.const 0))
      (then
        (call $log (i32.const 2) (i32.const 1120) (call $strlen (i32.const 1120)))
        (return (call $answer (i32.const 2048)))))
    (if (i32.ge_s (call $find (local.get $p) (local.get $n) (i32.const 1056)) (i32.const 0))
      (then (return (call $hello (local.get $p) (local.get $n)))))
    (call $answer (i32.const 1296)))
)
