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
	check(bcc_scan_until("f(a, b), c", ",") == 7, "scan skips parentheses", NULL);
	check(bcc_scan_until("\"a:b\":c", ":") == 5, "scan skips strings", NULL);
}

static void check_rewrite(const char *text, enum bcc_probe_kind kind, const char *expected,
			  bool latency)
{
	bcc_param_list params = { 0 };
	struct bcc_expr_needs needs = { 0 };
	char *error = NULL;
	struct bcc_param param = { strdup("size_t"), strdup("size") };
	vec_push(&params, param);
	char *out = bcc_expr_rewrite(text, strlen(text), &params, kind, &needs, &error);
	char name[256];
	snprintf(name, sizeof(name), "rewrite %s", text);
	check(out && strcmp(out, expected) == 0 && needs.latency == latency, name, out ? out : error);
	free(out);
	free(error);
	bcc_expr_needs_free(&needs);
	bcc_params_free(&params);
}

static void test_rewrite(void)
{
	check_rewrite("arg1 + arg3", BCC_KPROBE, "arg0 + arg2", false);
	check_rewrite("arg1", BCC_TRACEPOINT, "arg1", false);
	check_rewrite("$retval < 0 && $tgid", BCC_KRETPROBE, "retval < 0 && pid", false);
	check_rewrite("size > 16 && p->size", BCC_UPROBE, "$size > 16 && p->size", false);
	check_rewrite("\"size arg1\"", BCC_UPROBE, "\"size arg1\"", false);
	check_rewrite("$latency / 1000", BCC_URETPROBE, "(nsecs - @bcc_start[tid]) / 1000", true);
	check_rewrite("args->ret", BCC_TRACEPOINT, "args->ret", false);

	struct bcc_expr_needs needs = { 0 };
	char *error = NULL;
	char *out = bcc_expr_rewrite("$nope", 5, NULL, BCC_KPROBE, &needs, &error);
	check(!out && error && strstr(error, "'$nope' is not a special"), "unknown special", error);
	free(error);
	error = NULL;
	out = bcc_expr_rewrite("$entry(count)", 13, NULL, BCC_KRETPROBE, &needs, &error);
	check(out && strcmp(out, "@bcc_entry_count[tid]") == 0 && needs.entries.count == 1,
	      "$entry(param)", out ? out : error);
	free(out);
	free(error);
	bcc_expr_needs_free(&needs);
}

int main(void)
{
	test_forms();
	test_errors();
	test_head_and_scan();
	test_rewrite();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
