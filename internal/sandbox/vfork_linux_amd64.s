// The fork server's clone3 on amd64 (vfork_linux.go).

#include "textflag.h"

// func clone3Vfork(args, size uintptr) (pid, errno uintptr)
//
// The child shares the caller's memory and runs on its stack until it
// execs or exits (CLONE_VM|CLONE_VFORK): the return address is held in a
// register across the system call, since the child's own calls overwrite
// the stack below the caller's frame, where it was.
TEXT ·clone3Vfork(SB),NOSPLIT|NOFRAME,$0-32
	MOVQ	args+0(FP), DI
	MOVQ	size+8(FP), SI
	MOVQ	$435, AX // SYS_clone3
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	started
	NEGQ	AX
	MOVQ	$0, pid+16(FP)
	MOVQ	AX, errno+24(FP)
	RET
started:
	MOVQ	AX, pid+16(FP)
	MOVQ	$0, errno+24(FP)
	RET
