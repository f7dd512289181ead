;; bench.wat — the smallest well-behaved extension, for measuring the host's
;; own cost of a call. init declares one tool, "noop", and the tool_call and
;; tool_result hooks; every later request is answered {"ok":true,"result":{}}
;; without being looked at, which is a valid answer to each of them (an empty
;; tool result, "let the call through", "no patch"). Answers are packed
;; constants: init = (0 << 32) | 178, the rest = (1024 << 32) | 23.
(module
  (memory (export "memory") 2)
  (global $initDone (mut i32) (i32.const 0))
  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"bench\",\"version\":\"1.0.0\",\"tools\":[{\"name\":\"noop\",\"description\":\"Does nothing.\",\"parameters\":{\"type\":\"object\"}}],\"hooks\":[\"tool_call\",\"tool_result\"]}}")
  (data (i32.const 1024) "{\"ok\":true,\"result\":{}}")
  (func (export "pi_abi_v1"))
  ;; requests go to page 1; the benchmark's requests are far smaller than it
  (func (export "pi_alloc") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 65536)) (then (return (i32.const 0))))
    (i32.const 65536))
  (func (export "pi_free") (param i32 i32))
  ;; the first request of an instance is init
  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (if (i32.eqz (global.get $initDone))
      (then
        (global.set $initDone (i32.const 1))
        (return (i64.const 178))))
    (i64.or (i64.shl (i64.const 1024) (i64.const 32)) (i64.const 23)))
)
