;; mirror.wat — answers whatever its host-side test planted: the first
;; request of an instance (init) gets a fixed answer declaring the tool
;; "mirror"; every later pi_call returns the packed (ptr, len) last given to
;; the extra export set_answer. The fuzz test writes arbitrary bytes into
;; memory and points the answer at them (or anywhere at all), to drive the
;; host's whole answer path — bounds, size, envelope, result decoding, fault
;; handling and restart — with arbitrary input.
(module
  (memory (export "memory") 2)
  (global $initDone (mut i32) (i32.const 0))
  (global $ptr (mut i32) (i32.const 0))
  (global $len (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"mirror\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"mirror\",\"description\":\"Answers what was planted.\",\"parameters\":{\"type\":\"object\"}}],\"hooks\":[\"tool_call\",\"tool_result\",\"bash_spawn\"]}}")
  (func (export "pi_abi_v1"))
  (func (export "pi_alloc") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 32768)) (then (return (i32.const 0))))
    (i32.const 32768))
  (func (export "pi_free") (param i32 i32))
  (func (export "set_answer") (param $p i32) (param $n i32)
    (global.set $ptr (local.get $p))
    (global.set $len (local.get $n)))
  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (if (i32.eqz (global.get $initDone))
      (then
        (global.set $initDone (i32.const 1))
        (return (i64.const 206))))
    (i64.or (i64.shl (i64.extend_i32_u (global.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (global.get $len))))
)
