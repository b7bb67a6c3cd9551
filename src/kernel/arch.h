/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The machine: what sonde knows of the processor it traces, in one place
 * that everything else asks. Today that is x86-64 (arch_x86_64.c): the
 * layout of the kernel's struct pt_regs (what a kprobe, uprobe or perf
 * event program's context points to, and what reg() names), the calling
 * convention's and the syscall instruction's argument registers, the
 * registers' assembler names (USDT argument strings), and how user mode is
 * told from kernel mode. Another architecture is another file defining the
 * same names.
 */
#ifndef SONDE_ARCH_H
#define SONDE_ARCH_H

#include <stddef.h>

/* Offsets of the x86-64 kernel's struct pt_regs fields, which is what a
 * uprobe/kprobe program's context points to (ARG_LOCATION_REGISTER). */
enum pt_regs_offset {
	PT_REGS_R15 = 0, PT_REGS_R14 = 8, PT_REGS_R13 = 16, PT_REGS_R12 = 24,
	PT_REGS_BP = 32, PT_REGS_BX = 40, PT_REGS_R11 = 48, PT_REGS_R10 = 56,
	PT_REGS_R9 = 64, PT_REGS_R8 = 72, PT_REGS_AX = 80, PT_REGS_CX = 88,
	PT_REGS_DX = 96, PT_REGS_SI = 104, PT_REGS_DI = 112, PT_REGS_ORIG_AX = 120,
	PT_REGS_IP = 128, PT_REGS_CS = 136, PT_REGS_FLAGS = 144, PT_REGS_SP = 152,
	PT_REGS_SS = 160,
};

/* How many arguments live in registers, in both conventions below. */
#define ARCH_ARGUMENT_REGISTERS 6
/* A function's integer arguments 0..5 at its first instruction (System V:
 * di, si, dx, cx, r8, r9), as pt_regs offsets; its return value's. */
extern const int arch_call_arguments[ARCH_ARGUMENT_REGISTERS];
#define ARCH_RETURN_VALUE PT_REGS_AX
/* A syscall's arguments 0..5 in the saved user registers (r10, not cx: the
 * syscall instruction clobbers cx), and where its number is kept. */
extern const int arch_syscall_arguments[ARCH_ARGUMENT_REGISTERS];
#define ARCH_SYSCALL_NUMBER PT_REGS_ORIG_AX
/* The saved instruction pointer and stack pointer. */
#define ARCH_INSTRUCTION_POINTER PT_REGS_IP
#define ARCH_STACK_POINTER PT_REGS_SP
/* User mode: the saved code segment's privilege level (its low two bits)
 * is 3; __USER_CS, 64-bit user code's segment, tells it from 32-bit code. */
#define ARCH_MODE_REGISTER PT_REGS_CS
#define ARCH_MODE_MASK 3
#define ARCH_USER_MODE 3
#define ARCH_USER64_CODE_SEGMENT 0x33

/* reg("name"): the pt_regs field called name ("di", "orig_ax"), or -1. */
int arch_pt_regs_offset(const char *name);
/* Every name arch_pt_regs_offset() takes, for an error message. */
#define ARCH_PT_REGS_NAMES "ip, sp, bp, ax, bx, cx, dx, si, di, r8-r15, orig_ax, cs, flags, ss"
/* A general register by an assembler name at any width ("rdi", "edi",
 * "dil", "r8d", "rip"; length bytes of name): its pt_regs offset, or -1. */
int arch_asm_register_offset(const char *name, size_t length);

#endif
