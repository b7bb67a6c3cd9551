/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IR: real BPF instructions whose registers may be virtual.
 *
 * Registers 0..10 are BPF's own (r0 return value, r1-r5 helper arguments,
 * r10 frame pointer); numbers from IR_FIRST_VREG up are virtual and get a
 * callee-saved register (r6-r9) or a stack slot in regalloc.c. Jumps name a
 * label instead of an offset and map references name a map id; emit.c
 * resolves both. Keeping the instructions this close to BPF makes the code
 * generator simple and the golden listings readable.
 *
 * Conventions the register allocator relies on: helper arguments are moved
 * into r1-r5 immediately before the call (nothing else in between), and r0
 * is copied into a virtual register immediately after it.
 */
#ifndef SONDE_IR_H
#define SONDE_IR_H

#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>

#include "../common/diag.h"
#include "../common/util.h"

#define IR_FIRST_VREG 16

enum ir_kind {
	IR_INSN,     /* one BPF instruction; dst/src may be virtual */
	IR_LABEL,    /* marks where label `label` is */
	IR_JUMP,     /* conditional or unconditional jump to `label` */
	IR_LD_MAP,   /* dst = pointer to map `imm` (BPF_LD_IMM64, BPF_PSEUDO_MAP_FD); with src
	              * BPF_PSEUDO_MAP_VALUE, to byte `off` of its only value */
	IR_LD_IMM64, /* dst = 64-bit constant imm; with src BPF_PSEUDO_BTF_ID, the kernel
		      * variable whose vmlinux BTF id is imm (a per-CPU one for bpf_per_cpu_ptr) */
	IR_LD_FUNC,  /* dst = address of subprogram `imm` (BPF_LD_IMM64, BPF_PSEUDO_FUNC) */
};

struct ir_insn {
	enum ir_kind kind;
	uint8_t code;          /* BPF opcode (class | op | source/size) */
	int dst;
	int src;
	int16_t off;
	int64_t imm;
	int label;
	struct src_loc loc;
};

struct ir_function {
	VEC(struct ir_insn) insns;
	int vreg_count;        /* virtual registers handed out so far */
	int label_count;
	int stack_size;        /* bytes of stack in use below r10 */
	struct src_loc loc;    /* source position given to new instructions */
};

int ir_new_vreg(struct ir_function *fn);
int ir_new_label(struct ir_function *fn);
void ir_emit(struct ir_function *fn, struct ir_insn insn);
void ir_label(struct ir_function *fn, int label);

void ir_mov_imm(struct ir_function *fn, int dst, int64_t imm);
void ir_mov(struct ir_function *fn, int dst, int src);
void ir_alu(struct ir_function *fn, int op, int dst, int src);      /* op: BPF_ADD ... */
void ir_alu_imm(struct ir_function *fn, int op, int dst, int32_t imm);
void ir_load(struct ir_function *fn, int size, int dst, int base, int16_t off);  /* size: 1,2,4,8 */
void ir_store(struct ir_function *fn, int size, int base, int16_t off, int src);
void ir_store_imm(struct ir_function *fn, int size, int base, int16_t off, int32_t imm);
void ir_jump(struct ir_function *fn, int label);
void ir_jump_if(struct ir_function *fn, int op, int a, int b, int label);         /* op: BPF_JEQ ... */
void ir_jump_if_imm(struct ir_function *fn, int op, int a, int32_t imm, int label);
void ir_call(struct ir_function *fn, int helper);
void ir_ld_map(struct ir_function *fn, int dst, int map_id);
/* dst = address of byte offset of the value of array map_id (one entry) */
void ir_ld_map_value(struct ir_function *fn, int dst, int map_id, int offset);
void ir_exit(struct ir_function *fn);
void ir_ld_func(struct ir_function *fn, int dst, int subprogram);
/* dst = the kernel variable with vmlinux BTF id `btf_id` (BPF_PSEUDO_BTF_ID) */
void ir_ld_btf_var(struct ir_function *fn, int dst, int btf_id);
/* Reserves size bytes (8-aligned) of stack; returns the (negative) offset from r10. */
int ir_stack_alloc(struct ir_function *fn, int size);

void ir_free(struct ir_function *fn);
/* Drops instructions no path reaches (the verifier rejects them). */
void ir_remove_unreachable(struct ir_function *fn);
/* Jumps to jumps go straight to the end of the chain; jumps to where
 * execution would fall through anyway, and what no path reaches, go. */
void ir_simplify_jumps(struct ir_function *fn);
/* Drops an extension (`r <<= k; r s>>= k`) that repeats the one just before. */
void ir_drop_repeated_extensions(struct ir_function *fn);
/* Whether a function calls a helper or stores outside its own stack frame. */
bool ir_has_effect(const struct ir_function *fn);
/* Prints one instruction in a bpftool-like syntax (virtual registers as v16...). */
void ir_print_insn(FILE *out, const struct ir_insn *insn);
void ir_print(FILE *out, const struct ir_function *fn);

/* regalloc.c: maps every virtual register to r6-r9 or a stack slot. 0 or -1 with *error. */
int regalloc_run(struct ir_function *fn, char **error);
/* emit.c: resolves labels and lays out the main function followed by its
 * subprograms (callbacks), producing the final instructions (caller frees). */
int emit_program(const struct ir_function *functions, int function_count, struct bpf_insn **insns,
		 struct src_loc **locs, int *count, int **function_starts, char **error);
/* Prints final instructions (for -d and golden tests). */
void emit_print(FILE *out, const struct bpf_insn *insns, int count);

#endif
