/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracefs: where the kernel publishes its tracepoints. Sonde reads three
 * things from it: the list of tracepoints (available_events), each
 * tracepoint's record layout (events/CAT/NAME/format) and its perf event id
 * (the ID: line of the same file).
 *
 * A tracepoint's BPF program receives the raw trace record as its context,
 * so the field offsets of the format file are exactly the offsets the code
 * generator loads from. The common_* header fields are dropped, as bpftrace
 * does: `args` shows only the event's own fields.
 */
#ifndef SONDE_TRACEFS_H
#define SONDE_TRACEFS_H

#include <stdbool.h>

#include "../common/types.h"
#include "../common/util.h"

/* Size of the buffer a __data_loc string is read into. */
#define TRACEFS_DATA_LOC_STRING_SIZE 64

/* One tracepoint, "category:name" split in two. */
struct tracepoint_name {
	char *category;
	char *name;
};

typedef VEC(struct tracepoint_name) tracepoint_list;

/* A parsed format file. */
struct tracepoint_format {
	int id;               /* perf event config for PERF_TYPE_TRACEPOINT */
	struct type *record;  /* TYPE_RECORD "struct _tracepoint_CAT_NAME" */
	char **decls;         /* decls[i]: C declaration of record->fields[i], as written */
};

/* Directory tracefs is mounted on, or NULL when it is in neither usual place. */
const char *tracefs_root(void);
/* Like tracefs_root, but explains the failure in *error. 0 or -ENOENT. */
int tracefs_require(const char **root, char **error);

/* Appends every tracepoint whose category and name match the wildcard
 * patterns, sorted by category then name. 0 or -errno with *error set. */
int tracefs_find(const char *category_pattern, const char *name_pattern,
		 tracepoint_list *out, char **error);
void tracepoint_list_free(tracepoint_list *list);

/* Reads and parses events/CATEGORY/NAME/format. 0 or -errno with *error set. */
int tracefs_read_format(const char *category, const char *name,
			struct tracepoint_format *format, char **error);
/* Parses the text of a format file (exposed for tests). */
int tracefs_parse_format(const char *text, const char *category, const char *name,
			 struct tracepoint_format *format, char **error);
void tracepoint_format_free(struct tracepoint_format *format);

#endif
