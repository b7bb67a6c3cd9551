/* SPDX-License-Identifier: Apache-2.0 */
/* Preprocessing of bpftrace scripts' C directives; see preprocess.c. */
#ifndef SONDE_PREPROCESS_H
#define SONDE_PREPROCESS_H

#include <stdbool.h>
#include <stdint.h>

#include "../common/diag.h"
#include "../common/util.h"

struct macro {
	char *name;
	int64_t value;
	bool has_value;   /* false for macros that are not integer constants */
};

struct macro_table {
	struct macro *items;
	int count;
	int capacity;
};

struct preprocessed {
	char *text;                 /* the program with directives blanked out */
	struct macro_table macros;  /* from the script and the headers it includes */
};

/* A macro defined by the caller before the program is read (a tool's option
 * values, see src/toolkit/): substituted as text wherever its name is an
 * identifier outside strings and comments, probe names included, and seen
 * by #ifdef. A function-like one, NAME(x), has one parameter. */
struct predefined_macro {
	const char *name;
	const char *parameter;  /* NULL for an object-like macro */
	const char *body;       /* the replacement text */
};

/* Returns 0, or -1 after reporting a bad directive to diag (NULL: report nothing);
 * out is filled either way. script_path: the program's file, whose directory
 * `#include "x.h"` searches before the system's (NULL: none). */
int preprocess_program(const char *text, const char *script_path,
		       const struct predefined_macro *predefined, int predefined_count,
		       struct preprocessed *out, struct diag *diag);
void preprocessed_free(struct preprocessed *pre);
/* text with every predefined macro replaced (a new string), as the program
 * gets them: also for a tool's `source:` probes, which name option values. */
char *preprocess_substitute(const char *text, const struct predefined_macro *predefined,
			    int count);
/* The last definition of name, or NULL. */
struct macro *macro_find(const struct macro_table *table, const char *name);

#endif
