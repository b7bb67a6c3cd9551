/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiled program: what the compiler hands to the runtime.
 *
 * It holds BPF instructions ready for the verifier (map references are
 * BPF_LD_IMM64 with src_reg = BPF_PSEUDO_MAP_FD and imm = map id; the loader
 * swaps the id for the real fd), a description of every map (so the runtime
 * can create and print it), and a description of every asynchronous event a
 * BPF program can send through the ring buffer (so the runtime can decode it).
 *
 * Map storage, shared knowledge of code generator and printers:
 *  - BPF key = the user key (key_type, stored with type_storage_size; absent
 *    when key_type is NULL) followed, for hist/lhist/tseries only, by a u64 bucket.
 *    A map with neither user key nor bucket has an 8-byte zero key.
 *  - Per-CPU value layouts (maps of aggregations are BPF_MAP_TYPE_PERCPU_HASH):
 *      count        u64
 *      sum          s64 (u64 if the summed expression is unsigned)
 *      min, max     struct { s64 value; u64 is_set; }
 *      avg, stats   struct { s64 sum; u64 count; }
 *      tseries      struct { s64 value; u64 mark; u64 epoch; } of the slot named
 *                   in the key (epoch % intervals), see aggregations/tseries.c
 *      hist, lhist  u64 count of the bucket named in the key; with
 *                   compile_options.hist_sums (sonde serve) struct { u64 count;
 *                   s64 sum; }, the sum of the values that fell in the bucket,
 *                   so a Prometheus histogram's _sum is exact
 *    Every other value is one plain value (type_storage_size bytes) in a
 *    BPF_MAP_TYPE_HASH.
 *  - hist(x, k) bucket numbers: 0 holds negative values, 1 holds
 *    zero; for v >= 1 with l = floor(log2 v): 2 + (l << k) + s where s is the
 *    k-bit sub-bucket ((v - 2^l) << k >> l). The bucket's lower bound is
 *    2^l + ((s << l) >> k).
 *  - lhist bucket numbers: 0 holds v < min, i in 1..n holds
 *    [min + (i-1)*step, min + i*step), n+1 holds v >= max, n = (max-min)/step.
 *
 * Ring-buffer records: a u64 event index (into program.events) then the
 * arguments at the offsets listed in event_desc.args. PRINT_TOP and
 * PRINT_*_HIST records are the index alone: their args describe the row the
 * runtime assembles for each map entry (u64 index slot, the user key as
 * stored in the map, then for PRINT_TOP one u64 per value column) and
 * format it with the event's format.
 */
#ifndef SONDE_PROGRAM_H
#define SONDE_PROGRAM_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>

#include "diag.h"
#include "types.h"
#include "util.h"

struct probe_point;

enum map_role {
	MAP_ROLE_USER,     /* a map named in the program: @x, @ */
	MAP_ROLE_RINGBUF,  /* async events to user space */
	MAP_ROLE_LOST,     /* PERCPU_ARRAY[4 + n] of u64: [0] ring-buffer records dropped,
			    * [1] map updates refused (a full map),
			    * [2] exit() called: code * 2 + 1 (LOST_SLOT_EXIT),
			    * [3] stacks the stack map could not take (LOST_SLOT_STACKS),
			    * [LOST_SLOT_ZERO_DIVISOR + i] divisions by zero at
			    * program.zero_divisors[i] */
	MAP_ROLE_CONFIG,   /* ARRAY[1] of struct program_config, filled before attach */
	MAP_ROLE_SCRATCH,  /* PERCPU_ARRAY[1] of big temporaries that do not fit the stack */
	MAP_ROLE_STACKS,   /* STACK_TRACE: u32 id -> value_size / 8 u64 return addresses */
	MAP_ROLE_TABLE,    /* ARRAY[1] of constants (initial_value) the loader writes and
			    * freezes: the names of a shared program's points */
	MAP_ROLE_PINNED,   /* a hash map someone else pinned at pin_path, opened (not
			    * created) at load: pinned_has_key()'s 8-byte ids */
	MAP_ROLE_PIDS,     /* LRU_HASH: struct seen_process -> u64 0, the processes
			    * whose user stacks or symbols the runtime has been
			    * told about (EVENT_PROCESS_SEEN) */
};

/* Key of the MAP_ROLE_PIDS map. The name is part of it because exec keeps
 * the pid but replaces the maps, and almost always the name too. */
struct seen_process {
	uint32_t pid;
	uint32_t zero;
	char comm[16];
};

/* Ring-buffer records a program could not commit (the ring was full). */
#define LOST_SLOT_EVENTS 0
/* Map updates a full map refused. */
#define LOST_SLOT_REFUSED 1
/* exit()'s own path to the runtime, in the MAP_ROLE_LOST map: a control
 * record that a full ring buffer would drop must still end the run. */
#define LOST_SLOT_EXIT 2
/* kstack/ustack the kernel could not store: the stack map was full, or a
 * different stack already held its hash bucket (-ENOMEM, -EEXIST). */
#define LOST_SLOT_STACKS 3
#define LOST_SLOT_ZERO_DIVISOR 4

/* A helper call -k watches (a read of memory, a map update): where it is
 * in the program and which helper; its failures are counted per site. */
struct helper_site {
	struct src_loc loc;
	int helper;             /* BPF_FUNC_* */
};

/* Written by the runtime into the config map before any probe is attached. */
struct program_config {
	uint64_t start_ns; /* bpf_ktime_get_ns() at start, for `elapsed` */
	/* Set by the runtime when the run ends: every attached program tests it
	 * first and returns, so all of them stop at one map write, long before
	 * the kernel has finished detaching them (see run.c). */
	uint64_t stopped;
	/* CLOCK_REALTIME minus CLOCK_BOOTTIME at start, for what a program
	 * files by wall-clock time (tseries() intervals) */
	uint64_t wall_offset_ns;
};

struct map_desc {
	int id;                    /* index in program.maps; the imm of map-fd loads */
	char *name;                /* "@name" or "@"; internal maps: ".ringbuf" etc. */
	enum map_role role;
	struct type *key_type;     /* user key, NULL when the map has none */
	bool key_is_multi;         /* key_type is a tuple of @m[a, b] keys, printed without parens */
	char **key_names;          /* one per key expression (of the first access): the
				    * builtin's name (comm, pid, ...) or NULL; NULL if no key */
	int key_name_count;
	struct type *value_type;   /* aggregation kind or plain value type */
	uint32_t bpf_map_type;     /* enum bpf_map_type */
	uint32_t key_size;
	uint32_t value_size;       /* per CPU for per-CPU maps */
	uint32_t max_entries;
	char *sized_by;            /* what sets max_entries, named in "raise ..." advice when
				    * the map is full ("SONDE_MAX_MAP_ENTRIES", a tool's
				    * "--stack-storage-size"); NULL for fixed sizes */
	bool is_declared;          /* `let @m = kind(n)`: bpf_map_type and max_entries are the
				    * script's */
	/* MAP_ROLE_TABLE: the value (value_size bytes), and what the code
	 * generator finds it again by (its maker and a tag of the maker's) */
	uint8_t *initial_value;
	const void *table_owner;
	int table_tag;
	char *pin_path;            /* MAP_ROLE_PINNED: where the map is pinned */
	int fd;                    /* set by the runtime; -1 before */
	bool zeroed;               /* runtime: zero() ran, no clear() since: a histogram
				    * in an array still prints its name when empty, as
				    * bpftrace's zeroed hash entry does */
};

/* Delimits the part of a printf_matching() format whose text is matched
 * (trace -f: the message, not the columns); never printed. */
#define MESSAGE_MARK '\x1f'

/* Records up to this size are built on the BPF stack; bigger ones in the
 * per-CPU scratch map (MAP_ROLE_SCRATCH). */
#define EVENT_STACK_RECORD_MAX 256

enum event_kind {
	EVENT_PRINTF,      /* format + args, printed to the output */
	EVENT_SYSTEM,      /* format + args, run by the shell (needs --unsafe) */
	EVENT_CAT,         /* format + args make a path; print that file */
	EVENT_TIME,        /* format: strftime text of the current local time */
	EVENT_EXIT,        /* args[0]: exit code */
	EVENT_PRINT_MAP,   /* map_id, top, div */
	EVENT_CLEAR_MAP,   /* map_id */
	EVENT_ZERO_MAP,    /* map_id */
	EVENT_PRINT_VALUE, /* args[0]: a value that is not a map */
	EVENT_JOIN,        /* args[0]: string array; format holds the delimiter */
	EVENT_ROW,         /* row(): printf, or in JSON one object keyed by field_names */
	EVENT_PRINT_LOG2_HIST,   /* map_id, unit; format labels each key's histogram */
	EVENT_PRINT_LINEAR_HIST, /* the same for lhist() maps */
	EVENT_PRINT_TOP,   /* map_id, top, format; extra_map_ids give further columns */
	EVENT_PRINT_STACKS, /* map_id, stack_style: a map keyed by stacks as folded lines
			     * or BCC's stack blocks */
	EVENT_PROCESS_SEEN,/* args[0]: a pid whose user addresses will need names:
			    * the runtime reads its maps while it is alive */
};

/* print_stacks()' layout (event_desc.stack_style): bits. */
#define STACK_STYLE_FOLDED 1   /* `comm;outermost;...;innermost count` lines */
#define STACK_STYLE_ANNOTATE 2 /* kernel frames get a `_[k]` suffix (folded) */
#define STACK_STYLE_DELIMIT 4  /* "-" ("--" in blocks) between user and kernel frames */

enum arg_conversion {
	ARG_PLAIN,     /* print the value as its type says */
	ARG_STRFTIME,  /* u64 boot-time ns formatted with strftime_format */
};

struct event_arg {
	struct type *type;
	int offset;                 /* bytes from the record start (after the u64 index: >= 8) */
	enum arg_conversion conversion;
	char *strftime_format;
};

struct event_desc {
	enum event_kind kind;
	char *format;               /* printf/system/cat/time format, join delimiter */
	int arg_count;
	struct event_arg *args;
	int record_size;            /* total bytes of the record including the index */
	int map_id;                 /* PRINT_MAP / CLEAR_MAP / ZERO_MAP */
	int top;                    /* print(@m, top, div): 0 = all */
	int div;                    /* 0 = no division */
	int join_count;             /* EVENT_JOIN: number of string slots */
	char *field_names;          /* ROW, PRINT_TOP, PRINT_*_HIST: JSON names, one per
				     * conversion (per key field for histograms),
				     * space separated; NULL: k0 k1 ... value ... */
	char *unit;                 /* PRINT_*_HIST: the title of the bucket column */
	char *trailer;              /* PRINT_*_HIST: text after each labelled histogram */
	int *extra_map_ids;         /* PRINT_TOP: maps whose values for the same key follow */
	int extra_map_count;
	bool top_order_only;        /* PRINT_TOP: the first map orders the rows and is no column
				     * (its format has one conversion fewer): a sort option */
	int stack_style;            /* PRINT_STACKS: STACK_STYLE_* bits */
	char *match;                /* printf_matching(): the line is printed only when the
				     * text between the format's two MESSAGE_MARK bytes
				     * holds this; NULL for every other event */
	struct src_loc loc;         /* the call, for runtime messages */
};

enum probe_role {
	PROBE_ROLE_NORMAL, /* attached to a kernel event */
	PROBE_ROLE_BEGIN,  /* run once by the runtime before attaching the rest */
	PROBE_ROLE_END,    /* run once by the runtime at exit */
};

struct probe_program {
	char *name;                 /* e.g. "tracepoint:syscalls:sys_enter_openat" */
	struct probe_point *point;  /* what to attach to (from the provider) */
	enum probe_role role;
	uint32_t prog_type;         /* enum bpf_prog_type */
	uint32_t expected_attach_type;
	struct bpf_insn *insns;
	int insn_count;
	struct src_loc *insn_locs;  /* source of each instruction, for verifier errors */
	int *function_starts;       /* first instruction of main and of each callback */
	int function_count;         /* > 1 when the program has callbacks (needs BTF func_info) */
	int prog_fd;                /* set by the runtime; -1 before */
	uint32_t attach_btf_id;     /* fentry/fexit/tp_btf: BTF id of the target; 0 otherwise */
	int attach_btf_obj_fd;      /* BTF object holding attach_btf_id; 0 = vmlinux */
};

/* What a program's config block sets for the run; the environment's values
 * (SONDE_RINGBUF_SIZE, ...) win over these, as bpftrace's do. */
struct program_settings {
	uint32_t ringbuf_size;      /* perf_rb_pages, in bytes; 0 = not set */
	int print_maps_on_exit;     /* 1: yes, -1: no; 0 = not set (yes) */
	uint32_t max_cat_bytes;     /* 0 = not set */
};

/* A named argument the program reads with getopt(): what `-- --help` lists. */
struct program_option {
	char *name;
	const char *kind;           /* "BOOL", "INTEGER" or "STRING" */
	char *fallback;             /* the default as typed: false, 3, "def" */
	char *description;          /* getopt()'s third argument; NULL when not given */
};

struct program {
	struct source source;
	struct program_settings settings;
	VEC(struct program_option) options; /* each getopt() name once, in order of first use */
	VEC(struct map_desc) maps;
	VEC(struct event_desc) events;
	VEC(struct probe_program) probes;
	VEC(struct probe_point *) points; /* every expanded probe point; freed with the program */
	VEC(struct src_loc) zero_divisors; /* divisions whose divisor is known only at run time:
					    * each counts its divisions by zero (MAP_ROLE_LOST) */
	VEC(struct helper_site) helper_sites; /* -k: helper calls whose failures are counted,
					       * two MAP_ROLE_LOST slots each from
					       * helper_slot_base (count, last error) */
	int helper_slot_base;
	int ringbuf_map_id;         /* -1 when the program sends no events */
	int lost_map_id;
	int config_map_id;
	int scratch_map_id;
	int pids_map_id;            /* MAP_ROLE_PIDS, -1 when nothing user-space is symbolized */
	int process_seen_event;     /* index of the EVENT_PROCESS_SEEN event, -1 likewise */
};

/* The stack map holding stacks of `depth` frames (MAP_ROLE_STACKS maps have
 * one per depth used, as in bpftrace: a trace is hashed over the frames it
 * keeps), or -1. */
int program_stack_map(const struct program *program, int depth);

/* Frees what an event description owns and zeroes it. */
void event_desc_clear(struct event_desc *event);

/* Frees what one compiled probe owns (not its point: the program owns those). */
void probe_program_free(struct probe_program *probe);
/* Frees what program.c knows about; compile_free (compiler.h) frees a
 * compiled program whole, probe points included. */
void program_free(struct program *program);

#endif
