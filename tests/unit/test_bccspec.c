/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BCC probe specifiers (toolkit/bccspec.c): each form read into its kind,
 * library and function; the one-sentence errors for bad ones; the splitting
 * of what follows a probe; and the rewriting of BCC's expressions (1-based
 * argN, $retval, signature parameters, $latency). Expansion needs tracefs
 * and ELF files and is covered by tests/runtime/tools_multi.test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolkit/bccspec.h"

static int passed, failed;

static void check(bool ok, const char *name, const char *detail)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, detail ? detail : "");
		failed++;
	}
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static void check_form(const char *text, unsigned flags, enum bcc_probe_kind kind,
		       const char *library, const char *category, const char *function, bool either)
{
	struct bcc_probe probe;
	char *error = NULL;
	char name[256];
	snprintf(name, sizeof(name), "parse %s", text);
	if (bcc_probe_parse(text, strlen(text), flags, &probe, &error) < 0) {
		check(false, name, error);
		free(error);
		return;
	}
	char detail[512];
	snprintf(detail, sizeof(detail), "kind %d lib %s cat %s func %s either %d", probe.kind,
		 probe.library ? probe.library : "-", probe.category ? probe.category : "-",
		 probe.function, probe.user_either);
	check(probe.kind == kind && same(probe.library, library) && same(probe.category, category) &&
	      same(probe.function, function) && probe.user_either == either, name, detail);
	bcc_probe_free(&probe);
}

static void check_error(const char *text, unsigned flags, const char *expected)
{
	struct bcc_probe probe;
	char *error = NULL;
	char name[256];
	snprintf(name, sizeof(name), "error %s", text);
	int status = bcc_probe_parse(text, strlen(text), flags, &probe, &error);
	check(status < 0 && error && strcmp(error, expected) == 0, name, error ? error : "accepted");
	if (status == 0)
		bcc_probe_free(&probe);
	free(error);
}

static void test_forms(void)
{
	check_form("vfs_read", 0, BCC_KPROBE, NULL, NULL, "vfs_read", false);
	check_form("p::vfs_*", 0, BCC_KPROBE, NULL, NULL, "vfs_*", false);
	check_form("c:malloc", 0, BCC_UPROBE, "c", NULL, "malloc", false);
	check_form("/bin/bash:readline", 0, BCC_UPROBE, "/bin/bash", NULL, "readline", false);
	check_form("p:c:write", 0, BCC_UPROBE, "c", NULL, "write", false);
	check_form("r::do_sys_openat2", BCC_ALLOW_RETURN, BCC_KRETPROBE, NULL, NULL,
		   "do_sys_openat2", false);
	check_form("r:c:malloc", BCC_ALLOW_RETURN, BCC_URETPROBE, "c", NULL, "malloc", false);
	check_form("t:sched:sched_switch", 0, BCC_TRACEPOINT, NULL, "sched", "sched_switch", false);
	check_form("u:libc:malloc*", 0, BCC_USDT, "libc", NULL, "malloc*", true);
	check_form("U:node:gc__start", 0, BCC_USDT, "node", NULL, "gc__start", false);
	check_form("u:pthread:libpthread:pthread_create", 0, BCC_USDT, "pthread", NULL,
		   "libpthread:pthread_create", false);
}

static void test_errors(void)
{
	check_error("", 0, "a probe specifier is empty");
	check_error("x:a:b", 0, "'x:a:b' has an unknown probe type 'x' (p, r, t, u or U)");
	check_error("r::vfs_read", 0, "'r::vfs_read': this tool takes no return probes (r:)");
	check_error("t::sched_switch", 0, "'t::sched_switch': a tracepoint is t:CATEGORY:EVENT");
	check_error("u::probe", 0, "'u::probe' names no library or program: u:LIBRARY:NAME");
	check_error("p:vfs_read", 0, "'p:vfs_read' needs three parts: p:LIBRARY:NAME, or p::FUNCTION "
		    "for the kernel");
	check_error("t:a:b:c", 0, "'t:a:b:c' has too many ':'-separated parts");
	check_error("p:c:", 0, "'p:c:' names no function");
}

static void test_head_and_scan(void)
{
	struct bcc_probe probe;
	bcc_param_list params = { 0 };
	char *error = NULL;
	size_t used = 0;
	const char *text = "p:c:write(int fd, const char *buf, size_t count) (fd == 1) \"x\"";
	int status = bcc_probe_parse_head(text, 0, &probe, &params, &used, &error);
	check(status == 0 && params.count == 3 && strcmp(params.items[1].type, "const char *") == 0 &&
	      strcmp(params.items[1].name, "buf") == 0 && strcmp(params.items[2].type, "size_t") == 0 &&
	      strncmp(text + used, " (fd == 1)", 10) == 0, "head with signature", error);
	if (status == 0) {
		bcc_probe_free(&probe);
		bcc_params_free(&params);
	}
	free(error);
	error = NULL;
	status = bcc_probe_parse_head("p:c:write(int) ", 0, &probe, &params, &used, &error);
	check(status < 0 && error && strstr(error, "should be 'type name'"), "parameter without name",
	      error);
	free(error);
	error = NULL;
	bcc_params_free(&params);
	status = bcc_probe_parse_head("p:c:malloc(struct a; exit(); struct b * p)", 0, &probe,
				      &params, &used, &error);
	check(status < 0 && error && strstr(error, "';' cannot be part of a type"),
	      "a type is words and stars: it is written into a cast", error);
	free(error);
	bcc_params_free(&params);
	check(bcc_scan_until("f(a, b), c", ",") == 7, "scan skips parentheses", NULL);
	check(bcc_scan_until("\"a:b\":c", ":") == 5, "scan skips strings", NULL);
}

/* A specifier whose expression starts at `offset`, translated for a probe
 * of `kind` with the signature (size_t size); expected NULL: an error
 * holding `error_part`. */
static void check_translate(const char *spec, size_t offset, enum bcc_probe_kind kind,
			    const char *expected, const char *error_part)
{
	bcc_param_list params = { 0 };
	struct bcc_expr_needs needs = { 0 };
	char *error = NULL;
	struct bcc_param param = { strdup("size_t"), strdup("size") };
	vec_push(&params, param);
	struct bcc_expr_context context = { spec, &params, kind, true, NULL };
	char *out = bcc_expr_translate(&context, offset, strlen(spec) - offset, &needs, &error);
	char name[256];
	snprintf(name, sizeof(name), "translate %s", spec + offset);
	if (expected)
		check(out && strcmp(out, expected) == 0, name, out ? out : error);
	else
		check(!out && error && strstr(error, error_part), name, out ? out : error);
	free(out);
	free(error);
	bcc_expr_needs_free(&needs);
	bcc_params_free(&params);
}

static void test_translate(void)
{
	check_translate("arg1 + arg3", 0, BCC_KPROBE, "arg0 + arg2", NULL);
	check_translate("arg1", 0, BCC_TRACEPOINT, "arg1", NULL);
	check_translate("$retval < 0 && $tgid", 0, BCC_KRETPROBE, "retval < 0 && pid", NULL);
	check_translate("size > 16 && p->size", 0, BCC_UPROBE, "$size > 16 && p->size", NULL);
	check_translate("\"size arg1\"", 0, BCC_UPROBE, "\"size arg1\"", NULL);
	check_translate("$latency / 1000", 0, BCC_URETPROBE, "$bcc_latency / 1000", NULL);
	check_translate("args->ret", 0, BCC_TRACEPOINT, "args->ret", NULL);
	check_translate("$entry(size)+1", 0, BCC_URETPROBE, "$size+1", NULL);
	check_translate("str(arg1) /* c */ + 1", 0, BCC_UPROBE, "str(arg0) + 1", NULL);
	check_translate("$nope", 0, BCC_KPROBE, NULL, "'$nope' is not a special");
	check_translate("$entry(count)", 0, BCC_URETPROBE, NULL, "'count' is not a parameter");
	check_translate("$entry(size)", 0, BCC_UPROBE, NULL, "needs a return probe");
	check_translate("arg1", 0, BCC_URETPROBE, NULL, "a return probe has no arguments");
	check_translate("retval", 0, BCC_UPROBE, NULL, "retval needs a return probe");
	check_translate("size", 0, BCC_TRACEPOINT, NULL, "a tracepoint has no arguments to name");

	/* nothing but one expression: the error is placed in the specifier */
	const char *spec = "p:c:malloc \"%d\", 1); exit(); printf(\"%d\", 1";
	check_translate(spec, 17, BCC_UPROBE, NULL,
			"';' cannot be part of an expression here (column 20 of the specifier)\n"
			"    p:c:malloc \"%d\", 1); exit(); printf(\"%d\", 1\n"
			"                       ^");
	check_translate("x 1)", 2, BCC_UPROBE, NULL,
			"expected the end of the expression, found ')' (column 4 of the specifier)");
	check_translate("x {exit(); 1}", 2, BCC_UPROBE, NULL, "'{' cannot be part of an expression");
	check_translate("x exit()", 2, BCC_UPROBE, NULL, "'exit()' cannot be called in a specifier");
	check_translate("x @m", 2, BCC_UPROBE, NULL, "map '@m' cannot be part of an expression");
	check_translate("x size = 1", 2, BCC_UPROBE, NULL, "'=' cannot be part of an expression");
	check_translate("x arg1 arg2", 2, BCC_UPROBE, NULL,
			"found identifier 'arg2' (column 8 of the specifier)");
	check_translate("x (arg1 +", 2, BCC_UPROBE, NULL,
			"found end of input (column 10 of the specifier)");
	check_translate("x   ", 2, BCC_UPROBE, NULL, "an expression is empty");
}

int main(void)
{
	test_forms();
	test_errors();
	test_head_and_scan();
	test_translate();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
