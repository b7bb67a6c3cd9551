/* SPDX-License-Identifier: Apache-2.0 */
/* x86-64's registers and conventions; see arch.h. */
#include "arch.h"

#include <string.h>

const int arch_call_arguments[ARCH_ARGUMENT_REGISTERS] = {
	PT_REGS_DI, PT_REGS_SI, PT_REGS_DX, PT_REGS_CX, PT_REGS_R8, PT_REGS_R9,
};

const int arch_syscall_arguments[ARCH_ARGUMENT_REGISTERS] = {
	PT_REGS_DI, PT_REGS_SI, PT_REGS_DX, PT_REGS_R10, PT_REGS_R8, PT_REGS_R9,
};

/* In struct pt_regs's order: each is 8 bytes on from the one before. */
static const char *const pt_regs_names[] = {
	"r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax",
	"cx", "dx", "si", "di", "orig_ax", "ip", "cs", "flags", "sp", "ss",
};

int arch_pt_regs_offset(const char *name)
{
	for (size_t i = 0; i < sizeof(pt_regs_names) / sizeof(pt_regs_names[0]); i++)
		if (strcmp(pt_regs_names[i], name) == 0)
			return (int)i * 8;
	return -1;
}

/* Every name of the general registers at every width. */
static const struct {
	const char *names[4]; /* 64, 32, 16 and 8-bit names */
	int offset;
} asm_registers[] = {
	{ { "rax", "eax", "ax", "al" }, PT_REGS_AX },
	{ { "rbx", "ebx", "bx", "bl" }, PT_REGS_BX },
	{ { "rcx", "ecx", "cx", "cl" }, PT_REGS_CX },
	{ { "rdx", "edx", "dx", "dl" }, PT_REGS_DX },
	{ { "rsi", "esi", "si", "sil" }, PT_REGS_SI },
	{ { "rdi", "edi", "di", "dil" }, PT_REGS_DI },
	{ { "rbp", "ebp", "bp", "bpl" }, PT_REGS_BP },
	{ { "rsp", "esp", "sp", "spl" }, PT_REGS_SP },
	{ { "r8", "r8d", "r8w", "r8b" }, PT_REGS_R8 },
	{ { "r9", "r9d", "r9w", "r9b" }, PT_REGS_R9 },
	{ { "r10", "r10d", "r10w", "r10b" }, PT_REGS_R10 },
	{ { "r11", "r11d", "r11w", "r11b" }, PT_REGS_R11 },
	{ { "r12", "r12d", "r12w", "r12b" }, PT_REGS_R12 },
	{ { "r13", "r13d", "r13w", "r13b" }, PT_REGS_R13 },
	{ { "r14", "r14d", "r14w", "r14b" }, PT_REGS_R14 },
	{ { "r15", "r15d", "r15w", "r15b" }, PT_REGS_R15 },
	{ { "rip", "eip", NULL, NULL }, PT_REGS_IP },
};

int arch_asm_register_offset(const char *name, size_t length)
{
	for (size_t r = 0; r < sizeof(asm_registers) / sizeof(asm_registers[0]); r++) {
		for (int w = 0; w < 4; w++) {
			const char *known = asm_registers[r].names[w];
			if (known && strlen(known) == length && strncmp(known, name, length) == 0)
				return asm_registers[r].offset;
		}
	}
	return -1;
}
