/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Probe providers: one file per kind of event source, all behind this
 * interface. The compiler asks a provider to expand a written probe spec
 * (wildcards included) into concrete probe points and to describe what each
 * point offers (typed `args`, argN, retval); the runtime asks it to attach a
 * loaded program and to list probes for -l. Nothing else about a provider
 * leaks into the core, and providers never print (they return an error
 * sentence for the caller to report).
 *
 * Adding a provider = one new file defining a `const struct provider` and one
 * line in the table in registry.c.
 */
#ifndef SONDE_PROVIDER_H
#define SONDE_PROVIDER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "../common/diag.h"
#include "../common/types.h"
#include "../common/util.h"
#include "../kernel/arch.h"

struct provider;
struct bpf_insn;

/* Where one argument (or the return value) of a probe lives, for providers
 * whose arguments are not a context record: uprobes and kprobes (the
 * calling convention's registers in struct pt_regs) and USDT (whatever the
 * probe's note says). The code generator reads arguments only through this. */
enum arg_location_kind {
	ARG_LOCATION_REGISTER, /* the pt_regs field at ctx + register_offset */
	ARG_LOCATION_MEMORY,   /* *(size *)(base + index * scale + displacement) in the traced process */
	ARG_LOCATION_CONSTANT, /* the constant `displacement` */
	/* the pt_regs field at register_offset of the struct pt_regs whose
	 * address is the context's first u64 (raw_syscalls: the task's saved
	 * user registers), read with bpf_probe_read_kernel */
	ARG_LOCATION_SAVED_REGISTER,
	ARG_LOCATION_ATTACH_COOKIE, /* bpf_get_attach_cookie(ctx): the site's cookie */
};

struct arg_location {
	enum arg_location_kind kind;
	int register_offset;   /* offsetof(struct pt_regs, reg) of the (base) register */
	int index_offset;      /* MEMORY: pt_regs offset of an index register, or -1 */
	int scale;             /* MEMORY: 1, 2, 4 or 8 */
	int64_t displacement;  /* MEMORY: added to the address; CONSTANT: the value */
	int size;              /* 1, 2, 4 or 8 bytes */
	bool is_signed;
};

/* Points attached together through one kernel object (syscall tracepoints
 * through one raw_syscalls dispatcher): shared by its points, freed with
 * the last of them. A provider embeds it in its own struct. */
struct probe_group {
	int refs;
	void (*free)(struct probe_group *group);
	/* Where a program run for one of the points finds at run time which
	 * point it is (the uprobe_multi cookie, the syscall number), each
	 * point's value being its group_slot, below index_limit; 0 when there
	 * is no such index. With it, `probe` and `func` are read from a table
	 * rather than compiled in, so a body that names nothing else of its
	 * point compiles to one program for all of them, loaded once. */
	struct arg_location index;
	int index_limit;
	/* Optional: writes the instructions (at most PROBE_GUARD_MAX) that
	 * begin every point's program and return 0 at once for an event of no
	 * point of the group, given the id of a table in the program's maps
	 * with a bit per index, set for the points of the program's block;
	 * returns their count. With them, when all the points compiled to one
	 * program (one_program, found by the compiler), the provider may attach
	 * that program alone where it would attach a dispatcher: no tail call. */
	int (*guard)(const struct probe_group *group, int members_map, struct bpf_insn *insns);
	bool one_program;
};

#define PROBE_GUARD_MAX 48

/* How a program reaches its probe's arguments. */
enum args_access {
	ARGS_NONE,        /* the probe has no arguments */
	ARGS_CTX_RECORD,  /* `args` is a record laid out in the context (tracepoints) */
	ARGS_PT_REGS,     /* arg0..argN and retval come from struct pt_regs (kprobe, uprobe) */
	ARGS_U64_ARRAY,   /* the context is u64[]: arg i at 8*i (raw tracepoints, fentry) */
	ARGS_LOCATED_RECORD, /* `args` is a record whose field i is at arg_locations[i]
			      * (syscall tracepoints served from raw_syscalls) */
};

/* Flags for the builtins a probe point supports. */
enum probe_feature {
	PROBE_HAS_ARGS = 1 << 0,    /* `args` / args->field */
	PROBE_HAS_ARGN = 1 << 1,    /* arg0 .. argN */
	PROBE_HAS_RETVAL = 1 << 2,  /* retval */
	PROBE_HAS_FUNC = 1 << 3,    /* func */
};

/* A probe as written, split at ':' — before wildcard expansion. */
struct probe_spec {
	char *text;            /* as written: "t:syscalls:sys_enter_*" */
	char *provider_name;   /* as written: "t" */
	char *parts[4];        /* the ':'-separated fields after the provider */
	int part_count;
	struct src_loc loc;
	pid_t pid;             /* -p target, 0 if none: usdt probes of every object it maps */
};

/* One concrete thing to attach to. */
struct probe_point {
	const struct provider *provider;
	char *name;            /* canonical full name: "tracepoint:sched:sched_switch" */
	char *target;          /* tracepoint category; interval/profile unit; software event */
	char *function;        /* tracepoint name; ... */
	uint64_t period;       /* interval/profile/software: sample period (ns or events) */
	uint64_t frequency;    /* interval/profile hz: samples per second (period is 0) */
	bool every_cpu;        /* attach one perf event per CPU (profile, software) */
	enum args_access args_access;
	unsigned features;     /* enum probe_feature bits */
	struct type *args_type;/* TYPE_RECORD for `args`; filled by describe() */
	/* ARGS_PT_REGS: where arg0..argN and retval are (filled by expand/describe) */
	int arg_count;                   /* argN with N >= arg_count is an error */
	struct arg_location *arg_locations;
	struct arg_location retval_location; /* valid when features has PROBE_HAS_RETVAL */
	char *binary_path;     /* uprobe/usdt: the object file attached to */
	uint64_t binary_offset;/* uprobe/usdt: file offset of the probed instruction */
	uint64_t semaphore_offset; /* usdt: file offset of the semaphore, 0 if none */
	pid_t pid;             /* attach to this process only (-p), 0 for all */
	/* Matched by a wildcard: the run goes on, with a warning, when the
	 * kernel refuses to attach it (bpftrace's missing_probes = warn). */
	bool from_wildcard;
	/* Something the user should know about how this point will be traced
	 * (e.g. "kprobes are not available here; tracing vfs_read with
	 * fentry instead"), printed by the compiler as `note: ...`; NULL if none. */
	char *note;
	/* Why this point cannot be attached on this kernel (its probe type is
	 * missing, and no other stands in); NULL if it can. The point is still
	 * made, with its arguments, so that the compiler checks the block's
	 * body before it reports this. */
	char *unavailable;
	/* kprobe_multi: the functions one program is attached to through one
	 * BPF_TRACE_KPROBE_MULTI link (`function` is then NULL); 0 otherwise. */
	char **functions;
	int function_count;
	struct probe_group *group; /* NULL unless attached with others */
	int syscall_number;        /* syscall tracepoints served from raw_syscalls */
	int group_slot;            /* the point's index in its group (group->index) */
};

typedef VEC(struct probe_point *) probe_point_list;
typedef VEC(int) fd_list;

struct provider {
	const char *name;          /* canonical: "tracepoint" */
	const char *aliases[4];    /* other spellings: "t"; NULL-terminated */
	uint32_t prog_type;        /* enum bpf_prog_type of programs for this provider */
	/* Validates spec and appends every matching point to *out. 0 or -errno
	 * with *error set; -ESRCH means "well-formed, but nothing here matches"
	 * (a function this build of a library lacks). */
	int (*expand)(const struct probe_spec *spec, probe_point_list *out, char **error);
	/* Fills in args_type and features; called only for points a program uses,
	 * and always through point->provider (a stand-in describes its own points). */
	int (*describe)(struct probe_point *point, char **error);
	/* Attaches prog_fd to point; pushes every fd that keeps it attached onto *fds. */
	int (*attach)(const struct probe_point *point, int prog_fd, fd_list *fds, char **error);
	/* Runs outside any traced task (BEGIN/END, interval timers): the -p
	 * filter on the current pid would never let it run, so it is not applied. */
	bool no_task_context;
	/* A spec that matches nothing (-ESRCH from expand) is skipped with a
	 * warning instead of failing the program: libraries differ between
	 * machines, and tools probe functions some builds do not have. */
	bool skip_missing;
	/* Traces a process: an integer cast to a pointer addresses its memory
	 * (read with probe_read_user), as current bpftrace does for uprobes. */
	bool user_space;
	/* The kernel runs the programs on one site last attached first (uprobe
	 * consumers are pushed at the head of a list), so several blocks on the
	 * same function are attached in reverse to run in the script's order. */
	bool runs_last_attached_first;
	/* Writes the names of probes matching pattern (NULL: all) to out, one a
	 * line; verbose adds args. 0, or -errno with *error set. */
	int (*list)(const char *pattern, bool verbose, FILE *out, char **error);
	/* Optional: -l PATTERN -p PID, the probes found in that process (usdt:
	 * every object it maps), as list answers. NULL: -p does not change what
	 * is listed. */
	int (*list_process)(const char *pattern, pid_t pid, bool verbose, FILE *out, char **error);
	/* Optional: what bpf_prog_load needs beyond prog_type for this point
	 * (fentry/fexit: expected_attach_type and the target's BTF id and BTF
	 * object fd, 0 for vmlinux; kprobe_multi: the expected attach type).
	 * Outputs start at 0; the callee sets what applies. 0 or -errno with
	 * *error set. NULL when the provider needs nothing. */
	int (*prepare_load)(const struct probe_point *point, uint32_t *expected_attach_type,
			    uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error);
	/* attach() hands the kernel probe_point_cookie(point) as the program's
	 * BPF cookie (a perf link's), so points of this provider can be
	 * grouped by probe_points_group_by_cookie. */
	bool attaches_cookie;
};

/* Finds a provider by canonical name or alias; NULL if none. */
const struct provider *provider_lookup(const char *name);
/* For a probe type bpftrace has and sonde does not (watchpoint, iter...):
 * a sentence saying so and why; NULL for any other name. */
const char *provider_unsupported_reason(const char *name);
/* NULL-terminated table of all providers, in -l order. */
extern const struct provider *const provider_table[];

/* Splits "prov:a:b" into a spec (no validation beyond the split). */
struct probe_spec *probe_spec_parse(const char *text, struct src_loc loc);
struct probe_point *probe_point_new(const struct provider *provider, const char *name);
void probe_spec_free(struct probe_spec *spec);
void probe_point_free(struct probe_point *point);

/* ---- helpers shared by providers (registry.c) ---- */

/* The BPF cookie a point is attached with: its index in a group whose
 * programs find it with bpf_get_attach_cookie(), else 0. */
static inline uint64_t probe_point_cookie(const struct probe_point *point)
{
	if (point->group && point->group->index.kind == ARG_LOCATION_ATTACH_COOKIE)
		return (uint64_t)point->group_slot;
	return 0;
}
/* Puts a probe block's points whose provider attaches_cookie (and that
 * have no group yet) into one group indexed by the cookie, when there are
 * several and the kernel gives perf links cookies: the block then needs
 * one program for them, not one per point (see probe_group). */
void probe_points_group_by_cookie(probe_point_list *points);

struct perf_event_attr;

/* Parses a count as probe specs write it: digits with optional '_'
 * separators and an optional eN exponent ("1_000", "1e6"). */
bool probe_parse_count(const char *text, uint64_t *value);
/* interval/profile: validates UNIT:COUNT (s, ms, us, hz) and appends the one
 * point, with period (ns) or frequency (hz) and target = unit. */
int probe_expand_timer(const struct provider *provider, const struct probe_spec *spec,
		       bool every_cpu, probe_point_list *out, char **error);
/* Opens attr on the first online CPU, normally 0 (on every online CPU when
 * point->every_cpu) and attaches prog_fd to each; pushes the perf and link
 * fds. On failure closes what it opened and explains in *error. */
int probe_attach_perf_event(const struct probe_point *point, struct perf_event_attr *attr,
			    int prog_fd, fd_list *fds, char **error);
/* A named perf event (software:, hardware:), as in a provider's table. */
struct perf_event_name {
	const char *name;
	const char *alias;       /* NULL when there is none */
	uint64_t config;         /* enum perf_sw_ids / perf_hw_id */
	uint64_t default_count;  /* sample period when the probe gives none */
};

/* Index of name or alias in table, or -1. */
int perf_event_name_find(const struct perf_event_name *table, int count, const char *name);
/* "a, b (alias) and c": the names, for error messages (caller frees). */
char *perf_event_name_list(const struct perf_event_name *table, int count);
/* Appends the per-CPU sampling point for table[index], named as written
 * ("software:cs:10"); count 0 means the table's default period. */
void perf_event_name_point(const struct provider *provider, const struct perf_event_name *table,
			   int index, const char *written_name, const char *count_text,
			   uint64_t count, probe_point_list *out);
/* -l for such a table: "provider:event:" lines, as bpftrace prints them; the
 * pattern may use the alias prefix and leave out the trailing colon. */
void perf_event_name_print(const struct perf_event_name *table, int count, const char *provider,
			   const char *alias, const char *pattern, FILE *out);

/* software and hardware: a table of named perf events of one perf type. */
struct perf_event_family {
	const struct provider *provider;
	uint32_t perf_type;                  /* PERF_TYPE_SOFTWARE, PERF_TYPE_HARDWARE */
	const struct perf_event_name *events;
	int event_count;
	const char *example;                 /* "software:faults:100", for the usage error */
};
/* PROVIDER:EVENT[:COUNT], EVENT possibly a wildcard: a point per event. */
int perf_event_family_expand(const struct perf_event_family *family, const struct probe_spec *spec,
			     probe_point_list *out, char **error);
/* Opens point's event (its index found by name) on every CPU and attaches prog_fd. */
int perf_event_family_attach(const struct perf_event_family *family,
			     const struct probe_point *point, int prog_fd, fd_list *fds,
			     char **error);

/* interval and profile: a cpu-clock perf event ticking at point->period ns
 * or point->frequency hz, on one CPU or on every CPU (point->every_cpu). */
int probe_attach_cpu_clock(const struct probe_point *point, int prog_fd, fd_list *fds, char **error);
/* For providers whose probes have no arguments and cannot be listed. */
int probe_describe_no_args(struct probe_point *point, char **error);
int probe_list_nothing(const char *pattern, bool verbose, FILE *out, char **error);

/* ---- dispatchers (dispatch.c) ---- */

struct bpf_insn;

/* A BPF_MAP_TYPE_PROG_ARRAY of slots programs: fd or -errno. */
int probe_dispatch_array_create(const char *name, uint32_t slots);
/* Instructions appended to a prelude: tail call of slot r3 of map_fd with
 * the context in r6, then return 0. */
#define PROBE_DISPATCH_TAIL_INSNS 6
/* Index of the `return 0` from the start of the tail: a prelude of N
 * instructions gives up with a jump to N + PROBE_DISPATCH_RETURN. */
#define PROBE_DISPATCH_RETURN 4
/* Loads prelude + tail: fd or -errno. */
int probe_dispatcher_load(uint32_t prog_type, uint32_t expected_attach_type, const char *name,
			  const struct bpf_insn *prelude, int prelude_count, int map_fd);

/* ---- syscall tracepoints through raw_syscalls (syscall_tracepoint.c) ---- */

/* Whether a probe spec matching this many syscalls:* tracepoints of one
 * direction (sys_exit_* or sys_enter_*) should have them served from
 * raw_syscalls rather than one perf event each. */
bool syscall_tracepoint_dispatch_wanted(bool is_exit, int syscall_points);
/* Whether a syscalls:EVENT is a sys_exit_ one. */
bool syscall_tracepoint_is_exit(const char *event);
/* The point for syscalls:EVENT served from raw_syscalls, in the group of
 * its direction (created on first use); NULL when its number is unknown
 * (then it stays an ordinary tracepoint). */
struct probe_point *syscall_tracepoint_point(const char *event, struct probe_group **enter_group,
					     struct probe_group **exit_group);

/* ---- user-space probes (uprobe.c, usdt.c) ---- */


/* Attaches prog_fd at point->binary_path + binary_offset through the
 * kernel's uprobe PMU (a return probe when retprobe), with the USDT
 * semaphore at point->semaphore_offset as reference counter when non-zero,
 * for point->pid only when it is set. Pushes the perf and link fds. */
int probe_attach_uprobe(const struct probe_point *point, bool retprobe, int prog_fd,
			fd_list *fds, char **error);

/* uprobe_multi.c: when the kernel has uprobe_multi links and a wildcard
 * matched several functions, puts points[first..] (all in one binary) into
 * one group attached through one link; otherwise leaves them alone. */
void uprobe_multi_gather(probe_point_list *points, int first, bool retprobe);
/* attach and prepare_load for a point of such a group */
int uprobe_multi_attach(const struct probe_point *point, int prog_fd, fd_list *fds, char **error);
int uprobe_multi_prepare_load(const struct probe_point *point, uint32_t *expected_attach_type,
			      uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error);

/* Resolves a symbol named in a USDT argument ("counter(%rip)") to its
 * link-time address; false if the object has no such symbol. */
typedef bool (*usdt_symbol_lookup)(void *context, const char *name, uint64_t *address);

/*
 * Decodes a USDT argument string ("-4@%edi 8@-8(%rbp) -4@$5") into one
 * arg_location per argument. probe_address is the probe's link-time
 * address: a symbol's address becomes a displacement from the instruction
 * pointer, which holds the probe's run-time address, so it works for PIE
 * and shared objects. lookup may be NULL (then symbols are errors).
 * Returns the count (malloc'd *locations) or -EINVAL with *error set.
 */
int usdt_parse_arguments(const char *text, uint64_t probe_address, usdt_symbol_lookup lookup,
			 void *context, struct arg_location **locations, char **error);

/* ---- kernel function probes (kprobe.c, fentry.c) ---- */

/* A function the kernel can trace, from tracefs's available_filter_functions. */
struct kernel_function {
	char *module;          /* NULL for vmlinux */
	char *name;
};

/* Every traceable kernel function, sorted by name, duplicates removed,
 * read once and cached for the life of the process. 0 or -errno (the file
 * is unreadable, e.g. under lockdown) with *error set. */
int kernel_functions(const struct kernel_function **functions, int *count, char **error);

/*
 * Expansion shared between the kprobe and fentry families so each can stand
 * in for the other on kernels that have only one of them. `spec` is the
 * probe as written (any of the four providers); `is_return` picks
 * kretprobe/fexit. Points keep the name as written but belong to the
 * provider that will really trace them; a point made for another provider
 * than the one written carries a note saying so.
 */
int kprobe_expand_points(const struct probe_spec *spec, bool is_return, probe_point_list *out,
			 char **error);
int fentry_expand_points(const struct probe_spec *spec, bool is_return, probe_point_list *out,
			 char **error);

/* One family of kernel-function probes, as function_family_expand needs to
 * know it; each array is indexed by is_return. */
struct function_family {
	int feature;                     /* enum feature: FEATURE_KPROBE, FEATURE_FENTRY */
	const char *kinds[2];            /* as a subject: "kprobes", "fexit" */
	const char *verb;                /* that goes with kinds: "are", "is" */
	const char *standing_names[2];   /* in "... cannot stand in either" */
	const char *traced_with[2];      /* in "... is traced with X instead" */
	const char *traced_detail[2];    /* what that note adds ("", " (arg0..arg5 ...)") */
	int (*expand_points)(const struct probe_spec *spec, bool is_return,
			     probe_point_list *out, char **error);
	/* Standing in: why spec cannot be served (a phrase), or NULL. */
	const char *(*refuses)(const struct probe_spec *spec);
};

extern const struct function_family kprobe_family;  /* kprobe.c */
extern const struct function_family fentry_family;  /* fentry.c */

/* spec's points with the written family if the kernel has it, else with
 * stand_in (each point noting so), else unavailable points and *error. */
int function_family_expand(const struct function_family *written,
			   const struct function_family *stand_in, const struct probe_spec *spec,
			   bool is_return, probe_point_list *out, char **error);
/* The canonical provider name of spec ("kprobe" for "k"), for point names. */
const char *function_family_provider_name(const struct probe_spec *spec);
/* A function's module as point names spell it: "vmlinux" for NULL. */
const char *function_family_module(const char *module);

/*
 * For a probe type this kernel lacks (and nothing stands in for): *error
 * says so. The points are made all the same with expand_points, each
 * carrying that message as `unavailable`, so that the block's body is
 * checked against its real arguments before the compiler reports it;
 * returns 0 then, or -EOPNOTSUPP with *error kept when they cannot be
 * made either (no such function).
 */
/* The first point that cannot be attached on this kernel, or NULL: for the
 * callers that expand to learn what is available (tools choosing sources). */
const struct probe_point *probe_points_first_unavailable(const probe_point_list *points);
int probe_points_unavailable(int (*expand_points)(const struct probe_spec *, bool,
						  probe_point_list *, char **),
			     const struct probe_spec *spec, bool is_return, probe_point_list *out,
			     char **error);

#endif
