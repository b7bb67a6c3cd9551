/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The runtime: takes a compiled program, creates its maps, loads its BPF
 * programs, runs BEGIN, attaches probes, drains the ring buffer until the
 * program ends (exit(), Ctrl-C/SIGTERM, end of the -c child or -p target),
 * then runs END and prints every map. It never reaches back into the
 * compiler: everything it knows comes from struct program.
 */
#ifndef SONDE_RUNTIME_H
#define SONDE_RUNTIME_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "../common/outfile.h"
#include "../common/program.h"
#include "../render/folded.h"
#include "../render/heatmap.h"

/* A tool's --svg / --heatmap: a picture of what it prints (picture.c). */
enum picture_kind {
	PICTURE_NONE,
	PICTURE_FLAMEGRAPH, /* of the stacks print_stacks() prints */
	PICTURE_HEATMAP,    /* of the histograms print_*_hist() print, a column an interval */
};

struct picture_request {
	enum picture_kind kind;
	const char *path;
	const char *title;      /* NULL: the renderer's default */
	const char *count_name; /* flame graphs: what a sample counts ("us"); NULL: samples */
};

struct serve_options;

struct runtime_options {
	const char *output_path; /* -o FILE, opened (and truncated) once the programs are
				  * loaded; NULL: stdout */
	bool json;              /* -f json */
	bool quiet;             /* -q: no "Attached N probes" */
	bool unsafe;            /* --unsafe: system() allowed */
	bool dry_run;           /* load into the verifier, attach nothing */
	int verbose;            /* -v: program sizes and verifier statistics */
	pid_t child_pid;        /* -c: stopped child to release after attaching; 0 if none */
	int child_release_fd;   /* write end of the pipe the stopped child waits on; -1 if none */
	pid_t target_pid;       /* -p: exit when this process exits; 0 if none */
	bool no_exit_maps;      /* tools print what they mean to: no maps at exit */
	int print_maps_on_exit; /* SONDE_PRINT_MAPS_ON_EXIT: 1 yes, -1 no; 0 = the program's
				 * config block says, else yes */
	uint32_t max_cat_bytes; /* SONDE_MAX_CAT_BYTES; 0 = the config block's, else 10240 */
	bool status_on_stderr;  /* JSON status records (attached_probes, lost_events) on
				 * stderr, not in the output: a tool's output is its own */
	struct picture_request picture; /* kind PICTURE_NONE: none */
	const struct serve_options *serve; /* sonde serve: answer scrapes while running; NULL: no */
};

/* Runs the program to completion; returns the process exit code. */
int runtime_run(struct program *program, const struct runtime_options *options);

/* ---- output (print.c, format.c) ---- */

/* A picture being drawn: the request, and what it gathered so far. */
struct picture {
	struct picture_request request;
	struct outfile *file;   /* where it is written: prepared (and closed) by the caller */
	struct heatmap heatmap;
	uint64_t column_ns;     /* when the last heat map column began */
	bool failed;            /* drawing or writing it failed, and was said: exit 1 */
	struct strbuf pending;  /* a device's or FIFO's picture, written at the end */
	const char *pending_what; /* what pending is ("flame graph"); NULL: nothing pending */
	struct strbuf note;     /* said on stderr once the picture is written */
};

struct output {
	FILE *file;
	bool json;
	struct picture *picture; /* NULL unless the tool was asked for one */
};

/* The flame graph of stacks, written to the picture's file. */
void picture_flamegraph(struct picture *picture, const struct folded_set *stacks);
/* A heat map column for the histograms printed now (a call within half a
 * second of the last one adds to its column), its buckets, and the file
 * written anew once a printer is done. */
void picture_heatmap_begin(struct picture *picture, const char *unit);
void picture_heatmap_add(struct picture *picture, int64_t low, int64_t high, uint64_t count);
void picture_heatmap_end(struct picture *picture);
void picture_free(struct picture *picture);
/* A picture drawn into file (prepared by outfile_prepare before tracing). */
void picture_init(struct picture *picture, struct outfile *file);
/* Writes what waits for the end (a device's or FIFO's picture): 0, or -1
 * if any write of the picture failed (said when it did). */
int picture_finish(struct picture *picture);

/* Prints a user map the way bpftrace does (sorted, hist bars, ...), reading
 * it from the kernel through map->fd. top/div as in print(@m, top, div). */
int print_map(const struct output *out, const struct map_desc *map, int top, int div);
/* print_log2_hist()/print_linear_hist() of map (the event's map) and
 * print_top(), in libbpf-tools' layouts (toolprint.c). */
int print_tool_histograms(const struct output *out, const struct map_desc *map,
			  const struct event_desc *event);
int print_tool_top(const struct output *out, const struct program *program,
		   const struct event_desc *event);
/* print_stacks(): BCC's stack blocks or folded lines (stackprint.c). */
int print_tool_stacks(const struct output *out, const struct map_desc *map,
		      const struct event_desc *event);
/* The values of a row (a record laid out as event->args says) as JSON
 * fields named by event->field_names: "a": 1, "b": "x" (no braces). */
void format_json_fields(struct strbuf *sb, const struct event_desc *event, const void *record);
/* Prints one non-map value (print($x), print((1, "a"))). */
void print_value(const struct output *out, const struct type *type, const void *data);
/* Renders a printf-style event into sb. */
void format_event(struct strbuf *sb, const struct event_desc *event, const void *record);
/* Appends text as a quoted JSON string (control characters escaped). */
void format_json_string(struct strbuf *sb, const char *text, size_t length);
/* An integer; in JSON, one a double cannot hold exactly becomes a string. */
void format_number(struct strbuf *sb, uint64_t value, bool is_signed, bool json);
/* Text of one value as bpftrace shows it inside map keys, tuples and print(). */
void format_value(struct strbuf *sb, const struct type *type, const void *data, bool json);
/* A kstack/ustack value (struct stack_value): its frames read from the
 * stack map registered with symbols_set_stack_map(), named and laid out as
 * the type's mode says. In bpftrace mode each frame is indented by `indent`
 * spaces: bpftrace uses 8 in values and printf, 4 in map keys. */
void format_stack(struct strbuf *sb, const struct type *type, const void *data, int indent);
/* The same from frames already read (count of them, zero-terminated or
 * not); pid names the process of user stacks. Starts with a newline and ends
 * every frame with one. */
void format_stack_frames(struct strbuf *sb, const struct type *type, uint64_t pid,
			 const uint64_t *frames, int count, int indent);
/* Bytes as %r shows them: printable ASCII as is, anything else as \xNN. */
void format_escaped(struct strbuf *sb, const void *data, size_t length);
/* Status lines that also have a JSON form: "Attached N probes", "Lost N events".
 * runtime_status_stream() says where they go. */
void print_attached(const struct output *out, FILE *status, int probe_count);
void print_lost(const struct output *out, FILE *status, uint64_t lost);
/* Where status lines go: the text ones to stderr, the JSON records into the
 * output among the others (as bpftrace writes them), unless the options say
 * stderr. */
FILE *runtime_status_stream(const struct runtime_options *options, const struct output *out);

#endif
