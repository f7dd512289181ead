;; callls.wat — measures tool.call from a WAT guest: its tool "callls" runs
;; the built-in ls through the host's tool.call and answers "listed" (or an
;; error when the host call failed). Requests go to page 1; the ls answer to
;; page 2 (64 KiB).
(module
  (import "pi" "host_call" (func $host_call (param i32 i32 i32 i32) (result i64)))
  (memory (export "memory") 3)
  (global $started (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"callls\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"callls\",\"description\":\"Lists the project through tool.call.\",\"parameters\":{\"type\":\"object\"}}],\"hooks\":[]}}")
  (data (i32.const 512) "{\"method\":\"tool.call\",\"params\":{\"name\":\"ls\",\"input\":{}}}")
  (data (i32.const 640) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"listed\"}]}}")
  (data (i32.const 768) "{\"ok\":false,\"error\":{\"message\":\"tool.call failed\"}}")
  (func (export "pi_abi_v1"))
  (func (export "pi_alloc") (param $size i32) (result i32)
    (if (i32.gt_u (local.get $size) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "pi_free") (param i32 i32))
  (func (export "pi_call") (param $req i32) (param $len i32) (result i64)
    (local $n i64)
    (if (i32.eqz (global.get $started))
      (then
        (global.set $started (i32.const 1))
        (return (i64.const 179))))
    (local.set $n (call $host_call (i32.const 512) (i32.const 56) (i32.const 131072) (i32.const 65536)))
    (if (i32.or (i64.lt_s (local.get $n) (i64.const 0)) (i64.gt_s (local.get $n) (i64.const 65536)))
      (then (return (i64.or (i64.shl (i64.const 768) (i64.const 32)) (i64.const 51)))))
    (i64.or (i64.shl (i64.const 640) (i64.const 32)) (i64.const 66)))
)
