/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What semantic analysis hands to code generation, besides the annotations it
 * writes into the AST (node->type, map_id, var_id, event_id).
 */
#ifndef SONDE_SEMA_H
#define SONDE_SEMA_H

#include "../common/program.h"
#include "../probes/provider.h"
#include "ast.h"
#include "compiler.h"
#include "preprocess.h"

/* A scratch variable ($name) of one probe block. */
struct var_info {
	char *name;
	struct type *type;
	int stack_offset;   /* assigned by codegen; 0 = not yet */
	bool loop_local;    /* the $kv of a for-map loop: lives in the loop callback's frame */
	bool is_typed;      /* `let $x: T`: T stays; integers assigned are converted to it */
};

/* What semantic analysis remembers of a user map beyond its map_desc. */
struct map_use {
	struct src_loc first;  /* where it first appears */
	bool assigned;         /* some assignment targets it: if it still has no
				* type, that assignment's value had an error */
};

/* One action block with its expanded probe points. */
struct probe_info {
	struct node *node;
	probe_point_list points;
	VEC(struct var_info) vars;
	/* a spec whose probe type this kernel lacks (a point's `unavailable`):
	 * reported after the body is checked; NULL if none */
	const struct node *unavailable_spec;
	const char *unavailable;
	/* a hidden variable set by `return` inside for ($kv : @m): the loop's
	 * callback can only stop the iteration, so the caller then ends the
	 * probe when it is set; -1 when no such return */
	int return_flag_var;
};

struct sema {
	struct diag *diag;
	const struct compile_options *options;
	struct program *program;
	VEC(struct probe_info) probes;
	/* the probe and point being checked */
	const struct macro_table *macros;   /* #define constants (preprocess.c) */
	VEC(struct map_use) map_uses;       /* by map id */
	struct probe_info *probe;
	struct probe_point *point;
	int skipped_blocks;  /* action blocks left out because none of their probes exist here */
	VEC(struct probe_info) skipped;  /* those blocks: typed once for their maps, never compiled */
	bool stack_depths[128]; /* kstack/ustack depths used: one stack map each */
	bool uses_user_symbols; /* ustack or usym(): processes are announced to the runtime */
	VEC(int) visible;    /* ids of the variables in scope, innermost last */
	VEC(int) unscoped;   /* ids of the variables first assigned without `let`: in
				* scope to the end of the probe, as bpftrace 0.17 has them */
	int loop_depth;
	int map_loop_depth;  /* inside for ($kv : @m): the body runs as a callback */
	bool report;        /* false during the silent first pass that only infers map types */
	struct script_types *script_types; /* the script's C definitions (sema_types.c) */
	int error_count;
};

/* Expands probes, infers and checks every type, creates map and event
 * descriptions in program. Returns 0, or -1 after reporting errors. */
int sema_analyze(struct sema *sema, struct ast *ast);
/* Releases what sema_analyze kept about the script's C definitions. */
void sema_types_free(struct sema *sema);
/* Re-types one probe block for one of its points (args layouts differ
 * between the points of a wildcard); codegen calls it before each point. */
int sema_retype_for_point(struct sema *sema, struct probe_info *probe, struct probe_point *point);

#endif
