/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BCC's probe specifiers, shared by the generated tools (funccount, trace,
 * argdist, stackcount): `[p|r|t|u|U:][lib:]function`, as BCC's multi-tools
 * write them, read into a struct bcc_probe and expanded into the sonde
 * probes that trace them.
 *
 * The tools differ only in what follows the probe (trace's filter and
 * format, argdist's types and expressions), and each splits that off
 * itself with the helpers here; the probe part, its wildcards or regular
 * expression, and the BCC expression dialect (1-based argN, $retval) are
 * read in one place. Nothing here prints: errors are one sentence in
 * *error, returned with -EINVAL (the specifier is wrong) or -ENOENT
 * (well formed, but it matches nothing here).
 */
#ifndef SONDE_BCCSPEC_H
#define SONDE_BCCSPEC_H

#include <stdbool.h>

#include "../common/util.h"

/* The kinds of probe a specifier names. */
enum bcc_probe_kind {
	BCC_KPROBE,      /* p::func, or a bare func: kernel function entry */
	BCC_KRETPROBE,   /* r::func */
	BCC_UPROBE,      /* p:lib:func, lib:func: user function entry */
	BCC_URETPROBE,   /* r:lib:func */
	BCC_TRACEPOINT,  /* t:category:event */
	BCC_USDT,        /* U:lib:probe; u:lib:probe when lib has such a probe */
};

/* How a tool reads the forms BCC's tools disagree on. */
enum bcc_dialect_flag {
	BCC_ALLOW_RETURN = 1 << 0,   /* r: is accepted (trace, argdist) */
};

struct bcc_probe {
	enum bcc_probe_kind kind;
	char *library;       /* lib name or path; NULL for kernel probes */
	char *category;      /* tracepoint category; NULL otherwise */
	char *function;      /* function, event or probe name: may hold '*' */
	bool user_either;    /* written u:: USDT if the library has such a probe, else a function */
};

/* One sonde probe a specifier expanded to. */
struct bcc_target {
	char *probe;         /* sonde's name: "uprobe:/usr/lib/x86_64-linux-gnu/libc.so.6:malloc" */
	char *name;          /* the name BCC prints: the function, event or USDT probe */
	char *category;      /* tracepoints: the category; NULL otherwise */
	enum bcc_probe_kind kind;   /* after u: is resolved */
};

typedef VEC(struct bcc_target) bcc_target_list;

/* The most probes one specifier may expand to (BCC's limit is 1000 too). */
#define BCC_MAX_TARGETS 1000

/* Reads "[type:][lib:]function" (text up to `length` bytes). 0, or -EINVAL
 * with *error naming the specifier. */
int bcc_probe_parse(const char *text, size_t length, unsigned flags, struct bcc_probe *out,
		    char **error);
void bcc_probe_free(struct bcc_probe *probe);

/* The probes the specifier matches: its function part is a glob ('*'), or
 * with `regex` an extended regular expression (searched, as BCC does, in
 * the name, or "category:event" for tracepoints). 0, -EINVAL or -ENOENT. */
int bcc_probe_expand(const struct bcc_probe *probe, bool regex, bcc_target_list *out,
		     char **error);
void bcc_target_list_free(bcc_target_list *list);

/* Whether a kind's probes have arg1..argN (kprobe, uprobe, USDT). */
bool bcc_kind_has_args(enum bcc_probe_kind kind);
bool bcc_kind_is_return(enum bcc_probe_kind kind);

/*
 * The text up to the first unnested, unquoted `stop` character (or the end):
 * how trace and argdist split a specifier whose parts hold expressions with
 * commas and colons inside parentheses and strings. Returns its length.
 */
size_t bcc_scan_until(const char *text, const char *stops);

struct bcc_param;
typedef VEC(struct bcc_param) bcc_param_list;

/* Reads a probe and the signature right after it ("p:c:write(int fd)"),
 * which ends at a blank, '#', '"' or the end; *used is where it stopped. */
int bcc_probe_parse_head(const char *text, unsigned flags, struct bcc_probe *probe,
			 bcc_param_list *params, size_t *used, char **error);

/* A parameter of argdist's signature "(size_t size, int fd)". */
struct bcc_param {
	char *type;
	char *name;
};

/* Reads "type name, type name" (no parentheses). 0 or -EINVAL. */
int bcc_params_parse(const char *text, size_t length, bcc_param_list *out, char **error);
void bcc_params_free(bcc_param_list *params);
/* "(type)(expr)" when sonde knows the integer type, else expr (a copy). */
char *bcc_type_cast(const char *type, const char *expr);

/* An error in a specifier: the message, then the specifier and a caret
 * under the `length` bytes at `offset` (0 or 1: a single caret). */
char *bcc_spec_error(const char *spec, size_t offset, size_t length, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Where an expression sits and what it may name. */
struct bcc_expr_context {
	const char *spec;             /* the specifier as written: errors point into it */
	const bcc_param_list *params; /* its signature's parameters */
	enum bcc_probe_kind kind;     /* the target's; a return probe reads parameters
				       * its entry probe saved */
	bool entry_specials;          /* $latency and $entry(p) may be used (argdist) */
	const struct bcc_target *target; /* where types are checked (a specifier's first
					  * match); NULL: syntax only */
};

/* What a probe's expressions used, for the generator to provide. */
struct bcc_expr_needs {
	bool latency;                 /* $latency: the entry time */
	VEC(int) params;              /* the signature's parameters used, by index, once each */
};

/*
 * Translates the BCC expression at spec[offset..offset+length) into sonde's
 * language, token by token with sonde's own lexer: arg1..argN become
 * arg0..argN-1 (BCC counts from 1), $retval retval, $pid/$tgid/$uid/$gid/
 * $cpu the builtins, a parameter `name` and $entry(name) the variable
 * $name, $latency $bcc_latency (both recorded in *needs). The result is
 * then parsed as exactly one expression: nothing in it can end the
 * expression it is put in, assign, call anything but a pure function, or
 * name a map. With a target, it is also compiled alone on that probe, so
 * that an unknown name or a wrong type is reported here too. NULL, with
 * *error pointing into the specifier, otherwise.
 */
char *bcc_expr_translate(const struct bcc_expr_context *context, size_t offset, size_t length,
			 struct bcc_expr_needs *needs, char **error);
void bcc_expr_needs_free(struct bcc_expr_needs *needs);

/*
 * The top of a probe's body: the parameters its expressions use, as
 * variables. At entry they are read from the arguments; in a return probe
 * from the maps (`maps` is their name's prefix, `key` their key: "tid", or
 * "tid, 3" when one specifier traces several functions) its entry probe
 * filled, and a return whose entry was not seen (a call that began before
 * tracing did) is skipped, as BCC skips it.
 */
void bcc_body_prologue(const struct bcc_expr_context *context, const struct bcc_expr_needs *needs,
		       const char *maps, const char *key, struct strbuf *body);
/* The entry probe that fills those maps, when a return probe needs any;
 * `predicate` is the return probe's (PID, TID). */
void bcc_entry_probe_write(const struct bcc_target *target, const struct bcc_expr_context *context,
			   const struct bcc_expr_needs *needs, const char *maps, const char *key,
			   const char *predicate, struct strbuf *program);

#endif
