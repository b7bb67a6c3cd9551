/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Semantic analysis unit tests: each program must fail to compile with the
 * given message at the given location (the first line of the diagnostic),
 * or compile cleanly. Programs use BEGIN/END and a few tracepoints, so the
 * tracepoint cases need tracefs (the test setup mounts it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/program.h"
#include "compiler/compiler.h"

struct sema_case {
	const char *name;
	const char *program;
	const char *expected; /* first diagnostic line, or NULL when it must compile */
};

static const struct sema_case cases[] = {
	{ "unknown function", "BEGIN { foo(1); }", "stdin:1:9: error: unknown function 'foo'" },
	{ "unknown identifier", "BEGIN { $x = bogus; }", "stdin:1:14: error: unknown identifier 'bogus'" },
	{ "map type conflict", "BEGIN { @x = 1; @x = \"a\"; }",
	  "stdin:1:17: error: map @x holds int64 elsewhere; it cannot also hold string[2]" },
	{ "map key conflict", "BEGIN { @x[1] = 1; @x[\"a\"] = 2; }",
	  "stdin:1:20: error: map @x is keyed by int64 elsewhere; here the key is string[2]" },
	{ "map key count conflict", "BEGIN { @x[1] = 1; @x[1, 2] = 2; }",
	  "stdin:1:20: error: map @x is keyed by int64 elsewhere; here the key is (int64, int64)" },
	{ "map missing key", "BEGIN { @x[1] = 1; @x = 2; }",
	  "stdin:1:20: error: map @x needs a key of type int64" },
	{ "aggregation then value", "BEGIN { @x = count(); @x = 1; }",
	  "stdin:1:23: error: map @x holds count() elsewhere; it cannot also hold int64" },
	{ "two aggregations", "BEGIN { @x = count(); @x = sum(2); }",
	  "stdin:1:23: error: map @x holds count() elsewhere; it cannot also hold sum()" },
	{ "aggregation in variable", "BEGIN { $x = count(); }",
	  "stdin:1:14: error: count() can only be assigned to a map" },
	{ "aggregation as statement", "BEGIN { count(); }",
	  "stdin:1:9: error: count() must be assigned to a map: @x = count(...)" },
	{ "aggregation read", "BEGIN { @x = stats(1); $y = @x + 1; }",
	  "stdin:1:29: error: the value of @x (stats()) can only be printed, not used in an expression" },
	{ "count read combines cpus", "BEGIN { @x = count(); $y = @x + 1; }", NULL },
	{ "printf too few args", "BEGIN { printf(\"%d %d\\n\", 1); }",
	  "stdin:1:9: error: printf() format has 2 conversions but 1 argument is given" },
	{ "printf too many args", "BEGIN { printf(\"x\\n\", 1); }",
	  "stdin:1:9: error: printf() format has 0 conversions but 1 argument is given" },
	{ "printf non-literal format", "BEGIN { $f = \"x\"; printf($f); }",
	  "stdin:1:26: error: printf() needs a string literal as its format" },
	{ "function arity exact", "BEGIN { @x = lhist(1, 2); }",
	  "stdin:1:14: error: lhist() takes 4 arguments, 2 given" },
	{ "function arity range", "BEGIN { @x = hist(); }",
	  "stdin:1:14: error: hist() takes 1 to 2 arguments, 0 given" },
	{ "function arity variadic", "BEGIN { printf(); }",
	  "stdin:1:9: error: printf() takes at least 1 argument, 0 given" },
	{ "system needs unsafe", "BEGIN { system(\"ls\"); }",
	  "stdin:1:9: error: system() is unsafe: run sonde with --unsafe to allow it" },
	{ "signal needs unsafe", "BEGIN { signal(\"SIGKILL\"); }",
	  "stdin:1:9: error: signal() is unsafe: run sonde with --unsafe to allow it" },
	{ "string arithmetic", "BEGIN { $x = \"a\" + 1; }",
	  "stdin:1:18: error: cannot apply '+' to string[2] and int64" },
	{ "string ordering", "BEGIN { if (\"a\" < \"b\") { exit(); } }",
	  "stdin:1:17: error: strings can only be compared with == and !=" },
	{ "variable retype", "BEGIN { $x = 1; $x = \"a\"; }",
	  "stdin:1:17: error: $x holds int64; it cannot also hold string[2]" },
	{ "variable before assignment", "BEGIN { printf(\"%d\\n\", $y); }",
	  "stdin:1:24: error: $y is used before it is assigned" },
	{ "break outside loop", "BEGIN { break; }", "stdin:1:9: error: 'break' outside of a loop" },
	{ "continue outside loop", "BEGIN { continue; }", "stdin:1:9: error: 'continue' outside of a loop" },
	{ "tuple index range", "BEGIN { $t = (1, 2); $x = $t.5; }",
	  "stdin:1:30: error: tuple index 5 is out of range: the tuple has 2 elements" },
	{ "unroll too big", "BEGIN { unroll(1000) { } }",
	  "stdin:1:16: error: unroll count must be between 1 and 100, not 1000" },
	{ "unroll not constant", "BEGIN { $n = 2; unroll($n) { } }",
	  "stdin:1:24: error: unroll needs a constant integer count" },
	{ "lhist bad step", "BEGIN { @x = lhist(1, 0, 10, 0); }",
	  "stdin:1:30: error: lhist()'s step must be positive" },
	{ "lhist not constant", "BEGIN { $m = 10; @x = lhist(1, 0, $m, 1); }",
	  "stdin:1:35: error: lhist()'s max must be a constant integer" },
	{ "args in BEGIN", "BEGIN { printf(\"%d\\n\", args->x); }", "stdin:1:24: error: the probe BEGIN has no args" },
	{ "unknown tracepoint field", "tracepoint:syscalls:sys_enter_openat { printf(\"%d\\n\", args->nope); }",
	  "stdin:1:61: error: tracepoint:syscalls:sys_enter_openat has no field named 'nope'" },
	{ "unknown probe type", "bogus:x { }", "stdin:1:1: error: unknown probe type 'bogus' in 'bogus:x'" },
	{ "unknown tracepoint", "tracepoint:syscalls:sys_enter_nope { }",
	  "stdin:1:1: error: tracepoint not found: syscalls:sys_enter_nope" },
	{ "retval on tracepoint", "tracepoint:syscalls:sys_exit_read { @ = retval; }",
	  "stdin:1:41: error: retval is not available for probe tracepoint:syscalls:sys_exit_read" },
	{ "printf type mismatch", "BEGIN { printf(\"%d\\n\", \"str\"); }", NULL /* checked below by prefix */ },
	{ "delete needs map", "BEGIN { delete(1); }",
	  "stdin:1:16: error: delete() needs a map element: delete(@m[key]), delete(@m, key) or delete(@scalar)" },
	{ "clear needs whole map", "BEGIN { @x[1] = 1; clear(@x[1]); }",
	  "stdin:1:26: error: clear() needs a whole map, like clear(@m)" },
	{ "for over aggregation", "BEGIN { @c[1] = count(); for ($kv : @c) { } }",
	  "stdin:1:37: error: cannot iterate over @c: it holds per-CPU count() values; print() it instead" },
	{ "positional not number", "BEGIN { printf(\"%d\\n\", $1); }",
	  "stdin:1:24: error: $1 is 'abc', not a number; use str($1) for text" },
	{ "positional zero", "BEGIN { $i = $0; }",
	  "stdin:1:14: error: $0 is not a positional parameter: they are numbered from $1" },
	{ "variable used in its own definition", "BEGIN { $t = (1, \"two\", $t / 5); }",
	  "stdin:1:25: error: $t is used before it is assigned" },
	{ "array index out of bounds",
	  "tracepoint:sock:inet_sock_set_state { @ = args->saddr[4]; }",
	  "stdin:1:55: error: index 4 is out of bounds for uint8[4]" },
	{ "array compare lengths",
	  "tracepoint:sock:inet_sock_set_state { @ = args->saddr == args->daddr_v6; }",
	  "stdin:1:55: error: cannot compare uint8[4] and uint8[16]: only integer arrays of the same type and length" },
	{ "array ordering", "tracepoint:sock:inet_sock_set_state { @ = args->saddr < args->daddr; }",
	  "stdin:1:55: error: arrays can only be compared with == and !=" },
	{ "array printf", "tracepoint:sock:inet_sock_set_state { printf(\"%d\\n\", args->saddr); }",
	  "stdin:1:60: error: %d specifier expects a value of type integer (array supplied)" },
	/* programs that must compile */
	{ "valid arrays", "tracepoint:sock:inet_sock_set_state { $a = args->saddr; @[$a[0], args->daddr_v6[15]] = "
	  "(ntop(args->saddr), ntop(args->daddr_v6), args->saddr, buf(args->saddr)); "
	  "@e = args->saddr == $a; }", NULL },
	{ "arrays printed and stored", "tracepoint:sock:inet_sock_set_state { print(args->saddr); "
	  "@a = args->saddr; @p = pton(\"::1\"); }", NULL },
	{ "valid counts", "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }", NULL },
	{ "valid tuple key", "BEGIN { @x[1, \"a\"] = (1, \"b\"); @x[2, \"bb\"] = (3, \"cc\"); }", NULL },
	{ "valid string widening", "BEGIN { @s = \"a\"; @s = comm; }", NULL },
	{ "valid ternary", "BEGIN { $x = 1 ? 2 : 3; $s = 1 ? \"a\" : \"bcd\"; }", NULL },
	{ "valid loops", "BEGIN { $i = 0; while ($i < 5) { $i++; if ($i == 3) { continue; } } for ($j : 0..3) { } }", NULL },
};

/* 70 maps in one probe pass the kernel's limit of 64 per program: the error
 * is located at the first map that did not fit (@mK on line K + 3, column 2),
 * whichever K that is once sonde's internal maps are counted. */
static bool check_too_many_maps(void)
{
	char *program_text = NULL, *text = NULL;
	size_t program_length = 0, length = 0;
	FILE *in = open_memstream(&program_text, &program_length);
	fprintf(in, "BEGIN { @first = 1; }\nBEGIN {\n");
	for (int i = 0; i < 70; i++)
		fprintf(in, "\t@m%d = %d;\n", i, i);
	fprintf(in, "}\n");
	fclose(in);
	FILE *out = open_memstream(&text, &length);
	struct source source = { .filename = "stdin", .text = program_text };
	struct diag diag;
	diag_init(&diag, &source, out);
	struct compile_options options = { .max_strlen = 64 };
	struct program program = { 0 };
	int result = compile_program(&source, &options, &program, &diag);
	fclose(out);
	int line = 0, column = 0, map = -1;
	bool ok = result < 0 &&
		  sscanf(text, "stdin:%d:%d: error: map @m%d does not fit", &line, &column, &map) == 3 &&
		  map >= 50 && map < 64 && line == map + 3 && column == 2;
	printf("%s too many maps located: %.*s\n", ok ? "PASS" : "FAIL",
	       (int)strcspn(text, "\n"), text);
	free(text);
	free(program_text);
	compile_free(&program);
	return ok;
}

/* Programs read from a file may hold NUL bytes, which would end the text
 * early: the first one is an error at its place. */
struct nul_case {
	const char *name;
	const char *program;
	size_t length;
	const char *expected;
};

static const struct nul_case nul_cases[] = {
	{ "nul byte in the middle", "BEGIN { exit(); }\0 BEGIN { }", 28,
	  "stdin:1:18: error: a NUL byte in the program text: is this a binary file?" },
	{ "leading nul byte", "\0BEGIN { exit(); }", 18,
	  "stdin:1:1: error: a NUL byte in the program text: is this a binary file?" },
	{ "nul byte on line 2", "BEGIN {\n  exit();\0 }", 21,
	  "stdin:2:10: error: a NUL byte in the program text: is this a binary file?" },
};

static bool check_nul_case(const struct nul_case *c)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	struct source source = { .filename = "stdin", .text = c->program, .length = c->length };
	struct diag diag;
	diag_init(&diag, &source, out);
	struct compile_options options = { .max_strlen = 64 };
	struct program program = { 0 };
	int result = compile_program(&source, &options, &program, &diag);
	fclose(out);
	char *newline = strchr(text, '\n');
	if (newline)
		*newline = '\0';
	bool ok = result < 0 && strcmp(text, c->expected) == 0;
	if (ok)
		printf("PASS %s\n", c->name);
	else
		printf("FAIL %s: result %d, got '%s', expected '%s'\n", c->name, result, text, c->expected);
	free(text);
	compile_free(&program);
	return ok;
}

int main(void)
{
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof(nul_cases) / sizeof(nul_cases[0]); i++) {
		if (check_nul_case(&nul_cases[i]))
			passed++;
		else
			failed++;
	}
	if (check_too_many_maps())
		passed++;
	else
		failed++;
	char *positional[] = { "abc" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sema_case *c = &cases[i];
		char *text = NULL;
		size_t length = 0;
		FILE *out = open_memstream(&text, &length);
		struct source source = { .filename = "stdin", .text = c->program };
		struct diag diag;
		diag_init(&diag, &source, out);
		struct compile_options options = { .max_strlen = 64, .positional = positional,
						   .positional_count = 1 };
		struct program program = { 0 };
		int result = compile_program(&source, &options, &program, &diag);
		fclose(out);
		char *newline = strchr(text, '\n');
		if (newline)
			*newline = '\0';
		bool ok;
		if (strcmp(c->name, "printf type mismatch") == 0)
			ok = result < 0 && strncmp(text, "stdin:1:24: error: ", 19) == 0;
		else if (c->expected)
			ok = result < 0 && strcmp(text, c->expected) == 0;
		else
			ok = result == 0 && length == 0;
		if (ok) {
			printf("PASS %s\n", c->name);
			passed++;
		} else {
			printf("FAIL %s: result %d, got '%s', expected '%s'\n", c->name, result, text,
			       c->expected ? c->expected : "(no error)");
			failed++;
		}
		free(text);
		compile_free(&program);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
