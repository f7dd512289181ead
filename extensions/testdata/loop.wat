;; loop.wat — hostile test module: loops forever (the host must time the call out).
;; Its tool "ok" answers normally; its tool "bad" misbehaves. Same skeleton
;; as good.wat: NUL-terminated strings, dispatch by substring. Before "bad"
;; loops it emits one progress update ("looping"), so a test can wait for the
;; guest to be inside its loop instead of sleeping.
(module
  (import "pi" "emit" (func $emit (param i32 i32) (result i32)))
  (memory (export "memory") 1)

  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"loop\",\"version\":\"0.0.1\",\"tools\":[{\"name\":\"ok\",\"description\":\"Answers ok.\",\"parameters\":{\"type\":\"object\"}},{\"name\":\"bad\",\"description\":\"Misbehaves.\",\"parameters\":{\"type\":\"object\"}}],\"hooks\":[]}}\00")
  (data (i32.const 1024) "\"method\":\"init\"\00")
  (data (i32.const 1536) "\"toolName\":\"bad\"\00")
  (data (i32.const 2048) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}}\00")
  (data (i32.const 3072) "{\"content\":[{\"type\":\"text\",\"text\":\"looping\"}]}\00")

  (func (export "pi_abi_v1"))

  (func (export "pi_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.add (i32.const 8192) (local.get $n)))
    (block $done
      (loop $grow
        (br_if $done (i32.ge_u (i32.mul (memory.size) (i32.const 65536)) (local.get $need)))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1))
          (then (return (i32.const 0))))
        (br $grow)))
    (i32.const 8192))

  (func (export "pi_free") (param i32 i32))

  (func $strlen (param $p i32) (result i32)
    (local $i i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  (func $has (param $p i32) (param $n i32) (param $lit i32) (result i32)
    (local $m i32) (local $i i32) (local $j i32)
    (local.set $m (call $strlen (local.get $lit)))
    (if (i32.gt_u (local.get $m) (local.get $n)) (then (return (i32.const 0))))
    (block $notfound
      (loop $at
        (br_if $notfound (i32.gt_u (local.get $i) (i32.sub (local.get $n) (local.get $m))))
        (local.set $j (i32.const 0))
        (block $mismatch
          (loop $cmp
            (if (i32.eq (local.get $j) (local.get $m)) (then (return (i32.const 1))))
            (br_if $mismatch
              (i32.ne
                (i32.load8_u (i32.add (i32.add (local.get $p) (local.get $i)) (local.get $j)))
                (i32.load8_u (i32.add (local.get $lit) (local.get $j)))))
            (local.set $j (i32.add (local.get $j) (i32.const 1)))
            (br $cmp)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $at)))
    (i32.const 0))

  (func $pack (param $p i32) (param $n i32) (result i64)
    (i64.or
      (i64.shl (i64.extend_i32_u (local.get $p)) (i64.const 32))
      (i64.extend_i32_u (local.get $n))))

  (func $answer (param $lit i32) (result i64)
    (call $pack (local.get $lit) (call $strlen (local.get $lit))))

  ;; the misbehaviour
  (func $bad (param $p i32) (param $n i32) (result i64)
    (drop (call $emit (i32.const 3072) (call $strlen (i32.const 3072))))
    ;; each turn writes the memory, so a host that frees the memory under
    ;; a running call (Host.Close) would crash the process, not just stop it
    (loop $forever
      (i32.store (i32.const 4096) (i32.add (i32.load (i32.const 4096)) (i32.const 1)))
      (br $forever))
    (unreachable))

  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (if (call $has (local.get $p) (local.get $n) (i32.const 1024))
      (then (return (call $answer (i32.const 0)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 1536))
      (then (return (call $bad (local.get $p) (local.get $n)))))
    (call $answer (i32.const 2048)))
)
