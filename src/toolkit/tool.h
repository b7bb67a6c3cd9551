/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The toolkit: ready-made tools (execsnoop, biolatency, ...) that are sonde
 * programs under tools/, embedded into the binary at build time.
 *
 * A tool file starts with a header of `//!` comment lines that declares what
 * the command line of the tool is; see tools/README.md for the format. This
 * module reads that header, parses a tool's command line against it, and
 * turns the option values into predefined macros for the preprocessor, so
 * that an option is a compile-time constant: a filter that is off folds away
 * and costs no instructions. It also picks, for each event source the tool
 * declares, the first alternative the running kernel offers.
 *
 * It hands on a struct tool_run: the program text, its macros and the
 * runtime settings the tool's options imply. It never runs anything itself.
 */
#ifndef SONDE_TOOL_H
#define SONDE_TOOL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "../common/util.h"
#include "../compiler/compiler.h"
#include "../compiler/preprocess.h"

/* One embedded tool (the Makefile generates the table from the tools folder). */
struct tool {
	const char *name;
	const char *text;           /* the whole file: header and program */
};

/* NULL-name-terminated, sorted by name. */
extern const struct tool tool_table[];

/* The kinds of option value, and the macro each defines. */
enum tool_value_kind {
	TOOL_VALUE_FLAG,    /* no argument: the macro is 1 when given, else 0 */
	TOOL_VALUE_INT,     /* a whole number */
	TOOL_VALUE_ERRNO,   /* an error: its name (ENOENT) or its number; the macro is the number */
	TOOL_VALUE_PID,     /* a process that must exist; the tool ends when it exits */
	TOOL_VALUE_STRING,  /* text: the macro is a string literal */
	TOOL_VALUE_DISK,    /* a block device's name (vda, nvme0n1p1) that must exist: a string literal */
	TOOL_VALUE_FILE,    /* a file that must exist: the macro is its path as a string literal,
			     * which may stand in a probe (`uprobe:LIBRARY:func`) */
	TOOL_VALUE_LIST,    /* "80,443": the macro is NAME(x), true when x is listed (or none is) */
	TOOL_VALUE_PIDS,    /* a list of processes or threads (ids), each of which must exist */
	TOOL_VALUE_CHOICE,  /* one of `choices`: the macro is the string, and MACRO_value is 1 */
	TOOL_VALUE_CGROUP,  /* a cgroup v2 directory: the macro is its id (what `cgroup` returns
			     * inside it), 0 when not given */
	TOOL_VALUE_PINNED,  /* a pinned hash map of 8-byte ids (BCC's --cgroupmap): the macro is
			     * NAME(x), pinned_has_key("PATH", x), or (1) when not given */
	TOOL_VALUE_SPECS,   /* text for the tool's generator: repeatable, defines no macro; as
			     * an `arg:` it takes every remaining argument */
};

/* An option (`//! option:`) or a positional argument (`//! arg:`). */
struct tool_option {
	char short_name;            /* 0 if none */
	char *long_name;            /* NULL if none */
	char *argument;             /* what its argument is called in --help; NULL for flags */
	bool is_positional;         /* an `arg:`, named by argument */
	char *macro;
	enum tool_value_kind kind;
	char *default_text;         /* NULL: the macro is left undefined unless given */
	char *choices;              /* TOOL_VALUE_CHOICE: "ext4,btrfs,xfs" */
	char *help;
	bool is_fixed;              /* set by the alias (ext4slower's -t): not shown, not given */
	bool has_range;             /* `int LO..HI` or `list LO..HI` (`LO..`: no upper bound):
				     * a value given (not the default) must be in it */
	long long range_low, range_high;
};

/* One alternative of an event source: the probe, and the macro defined when
 * it is the one chosen (NULL when the program need not know). */
struct tool_source_choice {
	char *macro;
	char *probe;
};

/* An event source: alternatives in order of preference; with a condition
 * (`source: when LOSSPROBE: kprobe:tcp_send_loss_probe`) only needed when
 * that option's macro is not 0 (a flag given). */
struct tool_source {
	VEC(struct tool_source_choice) choices;
	char *condition;            /* the macro, or NULL: always needed */
};

/* `size: MAP | MACRO`: an int option that sizes a map ("@name", or
 * "stack-map" for the maps behind kstack/ustack). */
struct tool_size {
	char *map;
	char *macro;
};

/* A "text | explanation" pair: an example, or a field of the output. */
struct tool_note {
	char *text;
	char *explanation;
};

struct tool_header {
	char *name;
	char *summary;              /* one line */
	char *about;                /* paragraphs, NULL if none */
	VEC(struct tool_option) options;   /* options, then positional arguments in order */
	VEC(struct tool_source) sources;
	VEC(struct tool_note) examples;
	VEC(struct tool_note) fields;
	VEC(struct tool_note) requirements;  /* `requires:` a path that must exist, and the sentence if not */
	VEC(struct tool_size) sizes;
	char *overhead;             /* NULL if not stated */
	/* `picture: flamegraph | TITLE | COUNT NAME` or `picture: heatmap | TITLE`:
	 * the tool also takes --svg FILE or --heatmap FILE (an option of macro
	 * PICTURE_FILE) and draws that picture of what it prints */
	char *picture_kind;         /* "flamegraph", "heatmap" or NULL */
	char *picture_title;
	char *picture_count_name;
	int max_strlen;             /* `strlen:` bytes of a string value; 0 = sonde's default */
	/* `alias: TOOL ARGS`: this tool is TOOL run with ARGS first (ext4slower
	 * is `fsslower -t ext4`); its header is TOOL's, under this tool's name,
	 * with this file's summary and examples when it has them */
	char *alias_of;
	char *alias_args;
};

/* One value given on the command line, under its option's macro name. */
struct tool_value {
	const char *macro;          /* the header's string */
	char *text;                 /* "1" for a flag */
};

/* What a tool's command line asks for. */
struct tool_run {
	const struct tool *tool;
	struct tool_header header;
	VEC(struct predefined_macro) macros;  /* owned strings */
	bool json;
	bool dry_run;
	bool help;                  /* print help and stop */
	bool source;                /* print the program and stop */
	bool man;                   /* print the man page and stop */
	int verbose;
	pid_t watch_pid;            /* the tool ends when this process does; 0 = none */
	VEC(struct tool_value) values;  /* every value given, in command-line order */
	char *program;              /* a generated tool's program (generator.h); NULL otherwise */
	char *picture_path;         /* --svg/--heatmap FILE; NULL if not given */
	VEC(struct map_size) map_sizes; /* the header's sizes with their values (owned strings) */
};

const struct tool *tool_find(const char *name);

/* Reads a tool's header; 0, or -EINVAL with *error set. */
int tool_header_parse(const char *name, const char *text, struct tool_header *out, char **error);
void tool_header_free(struct tool_header *header);

/*
 * Parses argv (argv[0] is the tool's name) against the tool's header and
 * picks its event sources. 0, or -EINVAL with *error set to one sentence
 * naming the option at fault, or -ENOENT when the kernel offers none of a
 * source's alternatives (*error says what is missing). Notes for -v go to
 * *notes (one line each).
 */
int tool_configure(const struct tool *tool, int argc, char **argv, struct tool_run *run,
		   struct strbuf *notes, char **error);
void tool_run_free(struct tool_run *run);

/* The last value given for the option with this macro, NULL if none. */
const char *tool_run_value(const struct tool_run *run, const char *macro);
/* The program to run: the generated one, else the tool's file. */
const char *tool_run_program(const struct tool_run *run);

/* `sonde tools`: every tool with its summary. */
void tool_print_list(FILE *out);
/* --help, ending with the EXAMPLES block. */
void tool_print_help(const struct tool_header *header, FILE *out);
/* --man: the sonde-NAME(8) page in roff. */
void tool_print_man(const struct tool_header *header, FILE *out);

#endif
