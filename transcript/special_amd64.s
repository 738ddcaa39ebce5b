//go:build !purego

#include "textflag.h"

// SPECIAL_BYTES fills X1 with sixteen quotes, X2 with sixteen backslashes
// and X3 with sixteen 0x1f, the last control character; it uses AX.
#define SPECIAL_BYTES \
	MOVQ $0x2222222222222222, AX; \
	MOVQ AX, X1; \
	PUNPCKLQDQ X1, X1; \
	MOVQ $0x5c5c5c5c5c5c5c5c, AX; \
	MOVQ AX, X2; \
	PUNPCKLQDQ X2, X2; \
	MOVQ $0x1f1f1f1f1f1f1f1f, AX; \
	MOVQ AX, X3; \
	PUNPCKLQDQ X3, X3

// SPECIAL_MASK sets bit i of reg when byte i of X0 is a quote, a backslash
// or a control character (equal to its minimum with 0x1f), with
// SPECIAL_BYTES in X1 to X3; it uses X4 and X5.
#define SPECIAL_MASK(reg) \
	MOVOU X0, X4; \
	PCMPEQB X1, X4; \
	MOVOU X0, X5; \
	PCMPEQB X2, X5; \
	POR X5, X4; \
	MOVOU X0, X5; \
	PMINUB X3, X5; \
	PCMPEQB X0, X5; \
	POR X5, X4; \
	PMOVMSKB X4, reg

// func indexSpecial16(b []byte) int
TEXT ·indexSpecial16(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	ANDQ $~15, BX
	XORQ CX, CX
	SPECIAL_BYTES

loop:
	CMPQ CX, BX
	JAE done
	MOVOU (SI)(CX*1), X0
	SPECIAL_MASK(AX)
	TESTL AX, AX
	JNZ found
	ADDQ $16, CX
	JMP loop

found:
	BSFL AX, AX
	ADDQ AX, CX

done:
	MOVQ CX, ret+24(FP)
	RET

// func skipPlain16(b []byte) int
//
// The escapes of a block of sixteen bytes are handled from the block's
// mask of special bytes, without loading it again, unless the escaped
// byte is the next block's.
TEXT ·skipPlain16(SB), NOSPLIT, $0-32
	MOVQ b_base+0(FP), SI
	MOVQ b_len+8(FP), BX
	XORQ CX, CX
	SPECIAL_BYTES

loop:
	LEAQ 16(CX), DX
	CMPQ DX, BX
	JA done // fewer than sixteen bytes left
	MOVOU (SI)(CX*1), X0
	SPECIAL_MASK(R8) // the block's special bytes
	TESTL R8, R8
	JNZ special
	MOVQ DX, CX
	JMP loop

special:
	// CX is the block's start, R8 its special bytes not yet passed.
	BSFL R8, R9
	LEAQ (CX)(R9*1), DX // the special byte
	MOVBLZX (SI)(DX*1), AX
	CMPB AL, $0x5c
	JNE stop // a quote or a control character
	LEAQ 1(DX), R10
	CMPQ R10, BX
	JAE stop // the escape is cut by the end of b
	MOVBLZX (SI)(R10*1), AX
	CMPB AL, $'n'
	JEQ escape
	CMPB AL, $0x22
	JEQ escape
	CMPB AL, $0x5c
	JEQ escape
	CMPB AL, $'t'
	JEQ escape
	CMPB AL, $'r'
	JEQ escape
	CMPB AL, $'/'
	JEQ escape
	CMPB AL, $'b'
	JEQ escape
	CMPB AL, $'f'
	JEQ escape

stop:
	MOVQ DX, CX
	JMP done

escape:
	ADDQ $2, R9 // past the escape, in the block
	CMPQ R9, $16
	JAE next
	MOVL R9, DI
	XCHGQ CX, DI // the shift count must be in CL
	SHRL CL, R8
	SHLL CL, R8
	XCHGQ CX, DI
	TESTL R8, R8
	JNZ special
	ADDQ $16, CX
	JMP loop

next:
	ADDQ R9, CX
	JMP loop

done:
	MOVQ CX, ret+24(FP)
	RET
