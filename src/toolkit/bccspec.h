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
/* `$name = (type)argN;` lines, one per parameter, for the top of a probe's
 * body (types sonde cannot cast to are read as the plain u64). */
void bcc_params_declare(const bcc_param_list *params, struct strbuf *body);
/* "(type)(expr)" when sonde knows the integer type, else expr (a copy). */
char *bcc_type_cast(const char *type, const char *expr);

/* What an expression used that the generator must provide. */
struct bcc_expr_needs {
	bool latency;        /* $latency: the entry time, saved at entry */
	VEC(char *) entries; /* $entry(name): parameters saved at entry */
};

/*
 * Rewrites a BCC expression into sonde's language: arg1..argN become
 * arg0..argN-1 (BCC counts from 1), $retval retval, $pid/$tgid/$uid/$gid/
 * $cpu the builtins, a signature parameter `name` the variable $name,
 * $latency (nsecs - @bcc_start[tid]) and $entry(p) @bcc_entry_p[tid]
 * (recorded in *needs). Strings and field names (after '.' or '->') are
 * left alone. NULL, with *error set, for an unknown $special.
 */
char *bcc_expr_rewrite(const char *text, size_t length, const bcc_param_list *params,
		       enum bcc_probe_kind kind, struct bcc_expr_needs *needs, char **error);
void bcc_expr_needs_free(struct bcc_expr_needs *needs);

/* "kprobe:f" -> the entry probe of a return probe's function ("kprobe:f"
 * for "kretprobe:f", "uprobe:/x:f" for "uretprobe:/x:f"); a copy. */
char *bcc_entry_probe(const struct bcc_target *target);

#endif
