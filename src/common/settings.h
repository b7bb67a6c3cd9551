/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The settings a user gives outside the program text or at its top: sonde's
 * environment variables, bpftrace's names for them (BPFTRACE_MAX_STRLEN is
 * read as SONDE_MAX_STRLEN), and the keys of a `config = { ... }` block.
 * One table says which is which, so the command line (main.c) and the
 * compiler's config block agree on every name.
 */
#ifndef SONDE_COMMON_SETTINGS_H
#define SONDE_COMMON_SETTINGS_H

#include <stdbool.h>

enum setting_id {
	SETTING_MAX_STRLEN,      /* bytes of a string value */
	SETTING_MAX_MAP_KEYS,    /* entries of each map */
	SETTING_PERF_RB_PAGES,   /* pages of the event ring buffer */
	SETTING_PRINT_MAPS_ON_EXIT,
	SETTING_STACK_MODE,      /* kstack/ustack's default: bpftrace, perf or raw */
	SETTING_MAX_CAT_BYTES,   /* bytes cat() prints at most */
	SETTING_MISSING_PROBES,  /* error (sonde's only way) */
	SETTING_UNUSED,          /* bpftrace's, without a use in sonde (the reason says why) */
};

struct setting {
	const char *key;            /* config key: bpftrace's lower-case name */
	enum setting_id id;
	const char *sonde_env;      /* sonde's environment variable; NULL if none */
	const char *bpftrace_env[3]; /* bpftrace's variables (older spellings too), NULL-ended */
	const char *reason;         /* SETTING_UNUSED: why sonde needs no such setting */
};

/* The setting called name: a config key (stack_mode), its upper-case form
 * (STACK_MODE) or bpftrace's variable (BPFTRACE_STACK_MODE); NULL if none. */
const struct setting *setting_find(const char *name);
/* The setting whose bpftrace variable is name; NULL if none. */
const struct setting *setting_find_bpftrace_env(const char *name);

/* A value as sonde's variable spells it: perf_rb_pages' page count becomes
 * SONDE_RINGBUF_SIZE's bytes, booleans "1"/"0"; the others as given.
 * Returns a new string, or NULL with *error saying what is wrong. */
char *setting_convert(const struct setting *setting, const char *value, char **error);

#endif
