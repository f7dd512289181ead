;; notes.wat — an ABI 1.1 extension in WebAssembly text: its tool
;; "remember" stores a note with the kv.set host method, reads it back with
;; kv.get, and answers the kv.get answer as the result's details.
(module
  (import "pi" "host_call" (func $host_call (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 2)
  (global $started (mut i32) (i32.const 0))
  ;; the answer to init (192 bytes)
  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"notes\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"remember\",\"description\":\"Stores a note in the kv store and reads it back.\",\"parameters\":{\"type\":\"object\"}}],\"hooks\":[]}}")
  ;; two host_call requests (68 and 43 bytes)
  (data (i32.const 512) "{\"method\":\"kv.set\",\"params\":{\"key\":\"note\",\"value\":\"hello from WAT\"}}")
  (data (i32.const 640) "{\"method\":\"kv.get\",\"params\":{\"key\":\"note\"}}")
  ;; the head of the tool's answer (89 bytes); kv.get's answer
  ;; is written right after it, then the closing braces
  (data (i32.const 1024) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"stored and read back\"}],\"details\":")
  ;; the answer when a host call fails (51 bytes)
  (data (i32.const 768) "{\"ok\":false,\"error\":{\"message\":\"host_call failed\"}}")
  (func (export "pi_abi_v1"))
  ;; requests are written to page 1 (every request here is far smaller)
  (func (export "pi_alloc") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "pi_free") (param i32 i32))
  (func (export "pi_call") (param $req i32) (param $len i32) (result i64)
    (local $n i64)
    ;; the first request of an instance is init
    (if (i32.eqz (global.get $started))
      (then
        (global.set $started (i32.const 1))
        (return (i64.const 192))))
    ;; every later one is tool.execute of "remember"
    (local.set $n (call $host_call (i32.const 512) (i32.const 68) (i32.const 4096) (i32.const 256)))
    (if (i64.lt_s (local.get $n) (i64.const 0))
      (then (return (i64.or (i64.shl (i64.const 768) (i64.const 32)) (i64.const 51)))))
    ;; kv.get's answer goes right after the head, at most 4096 bytes
    (local.set $n (call $host_call (i32.const 640) (i32.const 43) (i32.const 1113) (i32.const 4096)))
    (if (i32.or (i64.lt_s (local.get $n) (i64.const 0)) (i64.gt_s (local.get $n) (i64.const 4096)))
      (then (return (i64.or (i64.shl (i64.const 768) (i64.const 32)) (i64.const 51)))))
    ;; close details and the result: "}"
    (i32.store16 (i32.add (i32.const 1113) (i32.wrap_i64 (local.get $n))) (i32.const 0x7d7d))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32))
            (i64.add (local.get $n) (i64.const 91))))
)
