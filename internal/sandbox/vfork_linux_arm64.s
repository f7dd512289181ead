// The fork server's clone3 on arm64 (vfork_linux.go).

#include "textflag.h"

// func clone3Vfork(args, size uintptr) (pid, errno uintptr)
//
// The child shares the caller's memory and runs on its stack until it
// execs or exits (CLONE_VM|CLONE_VFORK); the return address stays in the
// link register (a leaf with no frame), which the child cannot overwrite.
TEXT ·clone3Vfork(SB),NOSPLIT,$0-32
	MOVD	args+0(FP), R0
	MOVD	size+8(FP), R1
	MOVD	$435, R8 // SYS_clone3
	SVC
	CMN	$4095, R0
	BCC	started
	NEG	R0, R0
	MOVD	ZR, pid+16(FP)
	MOVD	R0, errno+24(FP)
	RET
started:
	MOVD	R0, pid+16(FP)
	MOVD	ZR, errno+24(FP)
	RET
