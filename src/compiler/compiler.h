/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiler's one entry point: program text in, struct program out.
 * source -> tokens (lex.c) -> AST (parse.c) -> typed AST (sema.c)
 *        -> IR on virtual registers (ir.c) -> registers (regalloc.c)
 *        -> struct bpf_insn (emit.c)
 */
#ifndef SONDE_COMPILER_H
#define SONDE_COMPILER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../common/diag.h"
#include "../common/program.h"
#include "preprocess.h"

/* Most entries a map may be given (SONDE_MAX_MAP_ENTRIES, a tool's sizes). */
#define MAP_ENTRIES_LIMIT (1u << 24)
/* bpftrace 0.17's string size, when neither the environment nor a config block says. */
#define MAX_STRLEN_DEFAULT 64

/* A size a tool gives some of its maps (`//! size:` in its header), from one
 * of its options: BCC's --stack-storage-size sizes both the stack map and
 * the map of counts keyed by stacks. */
struct map_size {
	const char *map;        /* "@name", or "stack-map": the maps behind kstack/ustack */
	uint32_t entries;
	const char *option;     /* what sets it, for "raise ..." advice: "--stack-storage-size" */
};

struct compile_options {
	char **positional;      /* $1..$N as given on the command line */
	int positional_count;
	char **named;           /* getopt()'s arguments: "name" or "name=value" (the words
				 * after the program that start with "--", without it) */
	int named_count;
	bool *named_used;       /* named_count flags, set for each one a getopt() reads; NULL = none */
	pid_t target_pid;       /* -p: every probe filters on this pid; 0 = none */
	pid_t child_pid;        /* -c: value of cpid; 0 = none */
	/* User-space probes (uprobes, USDT) skip this process's events: sonde
	 * itself, whose own malloc() while printing would feed a probe on
	 * malloc without end. 0 = none (golden listings, fuzzing). */
	pid_t own_pid;
	bool unsafe;            /* --unsafe allows system() and signal() */
	int max_strlen;         /* bytes of a string value (SONDE_MAX_STRLEN); 0 = the config
				 * block's, else 64 */
	uint32_t max_map_entries; /* entries of a user map (SONDE_MAX_MAP_ENTRIES); 0 = the
				   * config block's, else 4096 */
	const char *stack_mode; /* kstack/ustack's default mode (SONDE_STACK_MODE); NULL = the
				 * config block's, else bpftrace */
	/* A probe that does not exist (SONDE_MISSING_PROBES, config missing_probes):
	 * "error", "warn" (skipped with a warning) or "ignore" (skipped); NULL =
	 * the config block's, else uprobes, kprobes and fentry warn (their
	 * providers' skip_missing) and the others are errors */
	const char *missing_probes;
	uint32_t stack_storage_size; /* stacks each stack map holds (SONDE_STACK_STORAGE_SIZE;
				      * a tool's "stack-map" size wins); 0 = 16384 */
	const struct map_size *map_sizes; /* a tool's sizes of named maps; they win */
	int map_size_count;
	FILE *dump;             /* -d: AST, IR and instructions are written here; NULL = no dump */
	const struct predefined_macro *macros; /* a tool's option values; see preprocess.h */
	int macro_count;
	bool join_printf;       /* one record per line: adjacent printf calls joined (tools) */
	bool drop_empty_probes; /* probes left with no code are not attached (tools) */
	bool hist_sums;         /* hist/lhist buckets also sum their values (sonde serve) */
	int helper_checks;      /* -k: count failed reads and map updates per call site */
	const char *script_path; /* the program's file, whose directory #include "x.h"
				  * searches first; NULL for -e, stdin and tools */
};

/* The size a tool gave the map called name, or NULL. */
const struct map_size *compile_options_map_size(const struct compile_options *options,
						const char *name);

/* Returns 0, or -1 after reporting every error through diag. */
int compile_program(const struct source *source, const struct compile_options *options,
		    struct program *program, struct diag *diag);
/* Frees everything compile_program put in program (its probe points too). */
void compile_free(struct program *program);

#endif
