/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Code generation: typed AST of one probe block, for one probe point, to IR.
 */
#ifndef SONDE_CODEGEN_H
#define SONDE_CODEGEN_H

#include "ir.h"
#include "sema.h"

/* Where an expression's result lives. */
enum value_kind {
	VALUE_NONE,   /* void: printf(), exit(), ... */
	VALUE_REG,    /* a 64-bit integer or pointer in virtual register `reg` */
	VALUE_STACK,  /* type->size bytes at r10 + stack_offset (strings, tuples, inet) */
	VALUE_ADDRESS,/* a struct or array not read yet: `reg` holds its address */
};

struct value {
	enum value_kind kind;
	int reg;
	int stack_offset;
	struct type *type;
	bool is_user;   /* VALUE_ADDRESS: in the traced process's memory, not the kernel's */
};

struct loop_labels {
	int break_label;
	int continue_label;
};

/* What moving frames off the stack needs to know about a callback. */
struct callback_info {
	int context_reg;           /* vreg taking the caller's variables pointer from r4, or -1 */
	int entry_count;           /* leading instructions that take the arguments r2-r4 */
};

/* An unroll being generated, and the one around it. */
struct unroll_frame {
	const struct node *node;
	const struct unroll_frame *outer;
};

struct codegen {
	struct ir_function fn;
	struct sema *sema;
	struct program *program;
	struct probe_info *probe;
	struct probe_point *point;
	int ctx_reg;               /* virtual register holding the context pointer */
	int exit_label;            /* `return` and failed predicates jump here */
	int stack_high;            /* deepest stack use seen; temporaries are reused per statement */
	struct node *assign_target;/* the map an aggregation call is assigned to */
	VEC(struct loop_labels) loops;
	VEC(struct ir_function) subprograms; /* callbacks of for-map loops and len() */
	VEC(struct callback_info) callbacks; /* one per subprogram */
	/* Inside a callback the probe's scratch variables live in the caller's
	 * frame and are reached through the callback's context pointer. */
	int pid_tgid_reg;          /* bpf_get_current_pid_tgid() taken once in the prologue, or -1 */
	bool in_callback;
	int outer_vars_reg;        /* vreg holding that pointer */
	int outer_vars_base;       /* caller's r10 offset the pointer stands for */
	int vars_base;             /* lowest r10 offset of the scratch-variable area */
	int other_insns;           /* IR in finished callbacks and in callers waiting for one */
	bool too_large;            /* an unroll would pass CODEGEN_INSNS_MAX; emit no more */
	const struct unroll_frame *unroll; /* the innermost unroll being generated, or NULL */
	bool stoppable;            /* an attached probe: returns at once once the run has stopped */
	bool *assigned_first;      /* per scratch variable: written before any read, not zeroed */
};

/* The kernel loads no program longer than this (BPF_COMPLEXITY_LIMIT_INSNS,
 * which also bounds what the verifier walks). */
#define CODEGEN_INSNS_MAX 1000000

/* Generates the BPF program for one point of one probe block into *out. */
int codegen_probe(struct sema *sema, struct probe_info *probe, struct probe_point *point,
		  struct probe_program *out, FILE *dump, struct diag *diag);

#endif
