;; good.wat — a minimal, well-behaved pi extension (ABI v1) written by hand.
;;
;; Strings live in data segments, NUL-terminated, so their lengths are found
;; at run time ($strlen). Requests are written by the host at $REQ (page 1
;; onwards; pi_alloc grows memory as needed). Answers are static strings, or
;; are built at $RESP. Dispatch is by substring: the host encodes requests
;; with encoding/json, so `"method":"init"` and `"toolName":"hello"` appear
;; verbatim.
(module
  (import "pi" "log" (func $log (param i32 i32 i32)))
  (import "pi" "emit" (func $emit (param i32 i32) (result i32)))
  (import "pi" "host_call" (func $host_call (param i32 i32 i32 i32) (result i64)))
  (import "pi" "host_take" (func $host_take (param i32 i32) (result i64)))

  (memory (export "memory") 2)

  ;; layout
  ;;     0 .. 2047   init answer
  ;;  2048 .. 24575  other strings, 512-byte slots
  ;; 24576 .. 32767  OUT buffer for host_take
  ;; 32768 .. 65535  RESP buffer for built answers
  ;; 65536 ..        REQ buffer (requests from the host)
  (global $OUT i32 (i32.const 24576))
  (global $RESP i32 (i32.const 32768))
  (global $REQ i32 (i32.const 65536))

  (data (i32.const 0) "{\"ok\":true,\"result\":{\"name\":\"good\",\"version\":\"1.2.3\",\"description\":\"A well-behaved hand-written module.\",\"tools\":[{\"name\":\"hello\",\"label\":\"Hello\",\"description\":\"Says hello.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}},\"promptSnippet\":\"hello: say hello\",\"promptGuidelines\":[\"Say hello politely.\"]},{\"name\":\"progress\",\"description\":\"Emits two partial results, then finishes.\",\"parameters\":{\"type\":\"object\",\"properties\":{}},\"executionMode\":\"sequential\"},{\"name\":\"fail\",\"description\":\"Always answers an error.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},{\"name\":\"exec\",\"description\":\"Runs echo through the exec host method.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},{\"name\":\"forbidden\",\"description\":\"Tries to exec a command that is not granted.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}],\"hooks\":[\"tool_call\",\"tool_result\",\"bash_spawn\",\"event\"],\"wants\":{\"fs\":[],\"exec\":[\"echo\"],\"env\":[]}}}\00")

  ;; patterns
  (data (i32.const 2048) "\"method\":\"init\"\00")
  (data (i32.const 2560) "\"method\":\"tool.execute\"\00")
  (data (i32.const 3072) "\"method\":\"hook.tool_call\"\00")
  (data (i32.const 3584) "\"method\":\"hook.tool_result\"\00")
  (data (i32.const 4096) "\"method\":\"hook.bash_spawn\"\00")
  (data (i32.const 4608) "\"method\":\"event\"\00")
  (data (i32.const 5120) "\"toolName\":\"progress\"\00")
  (data (i32.const 5632) "\"toolName\":\"fail\"\00")
  (data (i32.const 6144) "\"toolName\":\"exec\"\00")
  (data (i32.const 6656) "\"toolName\":\"forbidden\"\00")
  (data (i32.const 7168) "BLOCKME\00")
  (data (i32.const 7680) "REPLACEME\00")
  (data (i32.const 8192) "PATCHME\00")
  (data (i32.const 8704) "SPAWNME\00")
  (data (i32.const 9216) "DENYME\00")

  ;; answers
  (data (i32.const 10240) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello from wat\"}],\"details\":{\"by\":\"good\"}}}\00")
  (data (i32.const 10752) "{\"ok\":true,\"result\":{}}\00")
  (data (i32.const 11264) "{\"ok\":false,\"error\":{\"message\":\"the fail tool always fails\"}}\00")
  (data (i32.const 11776) "{\"ok\":true,\"result\":{\"block\":true,\"reason\":\"blocked by good: BLOCKME\"}}\00")
  (data (i32.const 12288) "{\"ok\":true,\"result\":{\"input\":{\"name\":\"replaced\"}}}\00")
  (data (i32.const 12800) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"patched by good\"}],\"isError\":false}}\00")
  (data (i32.const 13312) "{\"ok\":true,\"result\":{\"cwd\":\"/tmp\",\"env\":{\"GOOD\":\"1\"}}}\00")
  (data (i32.const 13824) "{\"ok\":false,\"error\":{\"message\":\"DENYME is not allowed\"}}\00")
  (data (i32.const 14336) "{\"content\":[{\"type\":\"text\",\"text\":\"step 1\"}],\"details\":{\"step\":1}}\00")
  (data (i32.const 14848) "{\"content\":[{\"type\":\"text\",\"text\":\"step 2\"}],\"details\":{\"step\":2}}\00")
  (data (i32.const 15360) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"progress done\"}]}}\00")
  (data (i32.const 15872) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"progress cancelled\"}],\"isError\":true}}\00")
  (data (i32.const 16384) "{\"method\":\"exec\",\"params\":{\"argv\":[\"echo\",\"hi from exec\"]}}\00")
  (data (i32.const 16896) "{\"method\":\"exec\",\"params\":{\"argv\":[\"rm\",\"-rf\",\"/nonexistent-pi-test\"]}}\00")
  (data (i32.const 17408) "{\"ok\":true,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"host answered\"}],\"details\":\00")
  (data (i32.const 17920) "}}\00")
  (data (i32.const 18432) "hello called\00")
  (data (i32.const 18944) "{\"ok\":false,\"error\":{\"message\":\"host_take failed\"}}\00")

  (func (export "pi_abi_v1"))

  ;; pi_alloc: one request at a time, always at $REQ; grows memory to fit.
  (func (export "pi_alloc") (param $n i32) (result i32)
    (local $need i32)
    (local.set $need (i32.add (global.get $REQ) (local.get $n)))
    (block $done
      (loop $grow
        (br_if $done (i32.ge_u (i32.mul (memory.size) (i32.const 65536)) (local.get $need)))
        (if (i32.eq (memory.grow (i32.const 1)) (i32.const -1))
          (then (return (i32.const 0))))
        (br $grow)))
    (global.get $REQ))

  (func (export "pi_free") (param i32 i32))

  (func $strlen (param $p i32) (result i32)
    (local $i i32)
    (block $end
      (loop $next
        (br_if $end (i32.eqz (i32.load8_u (i32.add (local.get $p) (local.get $i)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (local.get $i))

  ;; $has reports whether the NUL-terminated $lit occurs in [$p, $p+$n).
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

  ;; $hostcall sends the request string $lit with a deliberately tiny out
  ;; buffer (8 bytes), so the answer is held and fetched with host_take;
  ;; it answers {"content":[...],"details":<the host's answer>}.
  (func $hostcall (param $lit i32) (result i64)
    (local $n i64) (local $pre i32) (local $w i32)
    (local.set $n
      (call $host_call (local.get $lit) (call $strlen (local.get $lit)) (global.get $OUT) (i32.const 8)))
    (if (i64.gt_s (local.get $n) (i64.const 8))
      (then
        (local.set $n (call $host_take (global.get $OUT) (i32.const 8192)))))
    (if (i64.lt_s (local.get $n) (i64.const 0))
      (then (return (call $answer (i32.const 18944)))))
    (local.set $pre (call $strlen (i32.const 17408)))
    (memory.copy (global.get $RESP) (i32.const 17408) (local.get $pre))
    (local.set $w (i32.add (global.get $RESP) (local.get $pre)))
    (memory.copy (local.get $w) (global.get $OUT) (i32.wrap_i64 (local.get $n)))
    (local.set $w (i32.add (local.get $w) (i32.wrap_i64 (local.get $n))))
    (memory.copy (local.get $w) (i32.const 17920) (i32.const 2))
    (local.set $w (i32.add (local.get $w) (i32.const 2)))
    (call $pack (global.get $RESP) (i32.sub (local.get $w) (global.get $RESP))))

  (func $execute (param $p i32) (param $n i32) (result i64)
    (if (call $has (local.get $p) (local.get $n) (i32.const 5120))
      (then
        (if (i32.eq (call $emit (i32.const 14336) (call $strlen (i32.const 14336))) (i32.const 1))
          (then (return (call $answer (i32.const 15872)))))
        (if (i32.eq (call $emit (i32.const 14848) (call $strlen (i32.const 14848))) (i32.const 1))
          (then (return (call $answer (i32.const 15872)))))
        (return (call $answer (i32.const 15360)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 5632))
      (then (return (call $answer (i32.const 11264)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 6144))
      (then (return (call $hostcall (i32.const 16384)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 6656))
      (then (return (call $hostcall (i32.const 16896)))))
    (call $log (i32.const 2) (i32.const 18432) (call $strlen (i32.const 18432)))
    (call $answer (i32.const 10240)))

  (func (export "pi_call") (param $p i32) (param $n i32) (result i64)
    (if (call $has (local.get $p) (local.get $n) (i32.const 2048))
      (then (return (call $answer (i32.const 0)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 2560))
      (then (return (call $execute (local.get $p) (local.get $n)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 3072))
      (then
        (if (call $has (local.get $p) (local.get $n) (i32.const 7168))
          (then (return (call $answer (i32.const 11776)))))
        (if (call $has (local.get $p) (local.get $n) (i32.const 7680))
          (then (return (call $answer (i32.const 12288)))))
        (return (call $answer (i32.const 10752)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 3584))
      (then
        (if (call $has (local.get $p) (local.get $n) (i32.const 8192))
          (then (return (call $answer (i32.const 12800)))))
        (return (call $answer (i32.const 10752)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 4096))
      (then
        (if (call $has (local.get $p) (local.get $n) (i32.const 8704))
          (then (return (call $answer (i32.const 13312)))))
        (if (call $has (local.get $p) (local.get $n) (i32.const 9216))
          (then (return (call $answer (i32.const 13824)))))
        (return (call $answer (i32.const 10752)))))
    (if (call $has (local.get $p) (local.get $n) (i32.const 4608))
      (then
        ;; log the whole event request, so tests can see what arrived
        (call $log (i32.const 2) (local.get $p) (local.get $n))
        (return (call $answer (i32.const 10752)))))
    (call $answer (i32.const 11264)))
)
