;; command.wat — a WASI command, not a library: it exports _start and no
;; _initialize, as a Go guest built without -buildmode=c-shared does, but
;; otherwise the ABI v1 exports. The host must refuse it with a fix hint.
(module
  (memory (export "memory") 1)
  (func (export "_start"))
  (func (export "pi_abi_v1"))
  (func (export "pi_alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "pi_free") (param i32 i32))
  (func (export "pi_call") (param i32 i32) (result i64) (i64.const 0)))
