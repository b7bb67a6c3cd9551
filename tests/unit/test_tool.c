/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Toolkit unit tests: the tool header parser, option values turned into
 * macros (and the one-sentence errors for bad ones), the text substitution
 * of predefined macros, and folding, which is what makes an option that is
 * off cost nothing. Event sources are not chosen here (that needs tracefs);
 * the runtime cases cover them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/program.h"
#include "common/util.h"
#include "compiler/compiler.h"
#include "compiler/preprocess.h"
#include "toolkit/tool.h"

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

static const char sample_tool[] =
	"//! summary: A sample\n"
	"//! about: First line,\n"
	"//! about: second line.\n"
	"//! option: -x --fails | FAILS flag | Include failures\n"
	"//! option: -p --pid PID | PID pid 0 | This process only\n"
	"//! option: -n --name NAME | NAME string \"\" | Only this name\n"
	"//! option: -P --port PORTS | PORTS list | Only these ports\n"
	"//! option: --min MS | MIN_MS int 10 | Threshold\n"
	"//! option: -t --type FS | FS choice ext4,xfs ext4 | File system\n"
	"//! option: -l --lib PATH | LIB file \"libc\" | The library\n"
	"//! arg: interval | INTERVAL int | Seconds between outputs\n"
	"//! arg: count | COUNT int 99 | Number of outputs\n"
	"//! source: tracepoint:sched:sched_switch\n"
	"//! source: A=tracepoint:x:y | B=kprobe:z\n"
	"//! example: sonde sample -x | Failures too\n"
	"//! field: PID | The process\n"
	"//! strlen: 128\n"
	"//! requires: /proc/self/status | The sample needs /proc.\n"
	"BEGIN { exit(); }\n";

static void test_header(void)
{
	struct tool_header header;
	char *error = NULL;
	int status = tool_header_parse("sample", sample_tool, &header, &error);
	check(status == 0, "header parses", error);
	if (status)
		return;
	check(strcmp(header.summary, "A sample") == 0, "header summary", header.summary);
	check(strcmp(header.about, "First line, second line.") == 0, "header about joined", header.about);
	check(header.options.count == 9, "header options and arguments", NULL);
	check(header.options.items[0].short_name == 'x' && !header.options.items[0].argument &&
	      header.options.items[0].kind == TOOL_VALUE_FLAG, "header flag", NULL);
	check(header.options.items[1].short_name == 'p' &&
	      strcmp(header.options.items[1].long_name, "pid") == 0 &&
	      strcmp(header.options.items[1].argument, "PID") == 0 &&
	      strcmp(header.options.items[1].default_text, "0") == 0, "header pid option", NULL);
	check(!header.options.items[4].short_name && strcmp(header.options.items[4].long_name, "min") == 0,
	      "header long-only option", NULL);
	check(header.options.items[7].is_positional && !header.options.items[7].default_text,
	      "header positional without default", NULL);
	check(header.sources.count == 2 && header.sources.items[1].choices.count == 2 &&
	      strcmp(header.sources.items[1].choices.items[1].macro, "B") == 0 &&
	      strcmp(header.sources.items[1].choices.items[1].probe, "kprobe:z") == 0,
	      "header source alternatives", NULL);
	check(header.max_strlen == 128, "header strlen", NULL);
	check(header.requirements.count == 1 &&
	      strcmp(header.requirements.items[0].text, "/proc/self/status") == 0 &&
	      strcmp(header.requirements.items[0].explanation, "The sample needs /proc.") == 0,
	      "header requires", NULL);
	tool_header_free(&header);
	free(error);
}

static void expect_header_error(const char *name, const char *text, const char *fragment)
{
	struct tool_header header;
	char *error = NULL;
	int status = tool_header_parse("bad", text, &header, &error);
	check(status < 0 && error && strstr(error, fragment), name, error ? error : "parsed");
	tool_header_free(&header);
	free(error);
}

static void test_header_errors(void)
{
	expect_header_error("header without summary", "//! about: x\n", "no 'summary:'");
	expect_header_error("header unknown key", "//! summary: s\n//! colour: red\n",
			    "unknown header key 'colour'");
	expect_header_error("header unknown kind", "//! summary: s\n//! option: -x | X float | h\n",
			    "unknown option kind 'float'");
	expect_header_error("header flag with argument",
			    "//! summary: s\n//! option: -x --x ARG | X flag | h\n", "a flag takes no argument");
	expect_header_error("header option without name", "//! summary: s\n//! option: ARG | X int | h\n",
			    "neither a short nor a long name");
	expect_header_error("header size of no map", "//! summary: s\n//! size: stacks | N\n",
			    "a size is '@MAP | MACRO'");
	expect_header_error("header size of a flag",
			    "//! summary: s\n//! size: @m | F\n//! option: -f | F flag | h\n",
			    "size of @m: F is not an int option");
}

/* Configures `tool` with argv; returns the macro `name`'s body, or the error. */
static char *configure_tool(const struct tool *tool, int argc, char **argv, const char *name,
			    int *status)
{
	struct tool_run run;
	struct strbuf notes;
	char *error = NULL;
	char *result = NULL;
	strbuf_init(&notes);
	*status = tool_configure(tool, argc, argv, &run, &notes, &error);
	if (*status < 0) {
		result = error;
	} else {
		for (int i = 0; i < run.macros.count; i++)
			if (strcmp(run.macros.items[i].name, name) == 0)
				result = xstrdup(run.macros.items[i].body);
		free(error);
	}
	strbuf_free(&notes);
	tool_run_free(&run);
	return result;
}

/* The same for the sample tool (built on the fly). */
static char *configure(int argc, char **argv, const char *name, int *status)
{
	struct tool tool = { "sample", NULL };
	/* no sources: choosing them needs the kernel */
	static char *text;
	if (!text) {
		text = xstrdup(sample_tool);
		char *sources = strstr(text, "//! source:");
		char *example = strstr(text, "//! example:");
		memmove(sources, example, strlen(example) + 1);
	}
	tool.text = text;
	return configure_tool(&tool, argc, argv, name, status);
}

static void expect_macro(const char *test, int argc, char **argv, const char *name, const char *body)
{
	int status;
	char *got = configure(argc, argv, name, &status);
	bool ok = status == 0 && ((!got && !body) || (got && body && strcmp(got, body) == 0));
	check(ok, test, got ? got : "(undefined)");
	free(got);
}

static void expect_option_error(const char *test, int argc, char **argv, const char *message)
{
	int status;
	char *got = configure(argc, argv, "FAILS", &status);
	check(status < 0 && got && strcmp(got, message) == 0, test, got ? got : "(accepted)");
	free(got);
}

static void test_options(void)
{
	char *plain[] = { "sample", NULL };
	char *flags[] = { "sample", "-x", "--port", "80,443", "-n", "a\"b", "--min=5", "2", NULL };
	char *self_pid = xasprintf("%d", (int)getpid());
	char *with_pid[] = { "sample", "-p", self_pid, NULL };

	expect_macro("flag off", 1, plain, "FAILS", "0");
	expect_macro("flag on", 8, flags, "FAILS", "1");
	expect_macro("int default", 1, plain, "MIN_MS", "10");
	expect_macro("long option with =", 8, flags, "MIN_MS", "5");
	expect_macro("string default", 1, plain, "NAME", "\"\"");
	expect_macro("string quoted", 8, flags, "NAME", "\"a\\\"b\"");
	expect_macro("list off", 1, plain, "PORTS", "(1)");
	expect_macro("list on", 8, flags, "PORTS", "(x == 80 || x == 443)");
	expect_macro("positional given", 8, flags, "INTERVAL", "2");
	expect_macro("positional left undefined", 1, plain, "INTERVAL", NULL);
	expect_macro("positional default", 1, plain, "COUNT", "99");
	expect_macro("json off", 1, plain, "JSON", "0");
	expect_macro("pid", 3, with_pid, "PID", self_pid);
	char *xfs[] = { "sample", "-t", "xfs", NULL };
	expect_macro("choice default", 1, plain, "FS", "\"ext4\"");
	expect_macro("choice default flag", 1, plain, "FS_ext4", "1");
	expect_macro("choice given", 3, xfs, "FS_xfs", "1");
	expect_macro("choice not given", 3, xfs, "FS_ext4", NULL);

	char *lib[] = { "sample", "-l", "/bin/sh", NULL };
	expect_macro("file default", 1, plain, "LIB", "\"libc\"");
	expect_macro("file given", 3, lib, "LIB", "\"/bin/sh\"");

	char *bad_int[] = { "sample", "--min", "ten", NULL };
	char *bad_list[] = { "sample", "-P", "80,http", NULL };
	char *bad_pid[] = { "sample", "-p", "-3", NULL };
	char *unknown[] = { "sample", "-z", NULL };
	char *extra[] = { "sample", "1", "2", "3", NULL };
	char *bad_positional[] = { "sample", "soon", NULL };
	expect_option_error("bad int", 3, bad_int, "--min needs a whole number, not 'ten'");
	expect_option_error("bad list", 3, bad_list,
			    "-P/--port needs a comma-separated list of whole numbers, not '80,http'");
	expect_option_error("bad pid", 3, bad_pid, "-p/--pid needs a process id, not '-3'");
	expect_option_error("unknown option", 2, unknown, "unknown option -z");
	char *bad_choice[] = { "sample", "-t", "zfs", NULL };
	expect_option_error("bad choice", 3, bad_choice, "-t/--type must be one of ext4|xfs, not 'zfs'");
	char *no_file[] = { "sample", "--lib", "/nonexistent/lib.so", NULL };
	char *dir_file[] = { "sample", "-l", "/tmp", NULL };
	char *quote_file[] = { "sample", "-l", "/tmp/a\"b", NULL };
	expect_option_error("file missing", 3, no_file,
			    "-l/--lib: cannot use '/nonexistent/lib.so': No such file or directory");
	expect_option_error("file a directory", 3, dir_file, "-l/--lib: '/tmp' is not a regular file");
	expect_option_error("file with a quote", 3, quote_file,
			    "-l/--lib: a path with a '\"', a '\\' or a line break cannot name a "
			    "probe's file, not '/tmp/a\"b'");
	expect_option_error("extra argument", 4, extra, "unexpected argument '3' (see sample --help)");
	expect_option_error("bad positional", 2, bad_positional,
			    "the interval argument needs a whole number, not 'soon'");
	free(self_pid);
}

/* Ranges: `int LO..HI`, `int LO..` (no upper bound) and `list LO..HI` (each
 * element); a default outside the range ("not given") is fine. */
static const char ranged_tool[] =
	"//! summary: Ranges\n"
	"//! option: -t --tid TID | TID int 1..4194304 0 | This thread only\n"
	"//! option: -r --rows ROWS | ROWS int 1.. 20 | Rows\n"
	"//! option: -P --port PORTS | PORTS list 1..65535 | Only these ports\n"
	"//! arg: interval | INTERVAL int 1..99999999 99999999 | Seconds between outputs\n"
	"BEGIN { exit(); }\n";

static void expect_ranged(const char *test, int argc, char **argv, const char *name,
			  const char *expected, bool is_error)
{
	struct tool tool = { "ranged", ranged_tool };
	int status;
	char *got = configure_tool(&tool, argc, argv, name, &status);
	check((status < 0) == is_error && got && strcmp(got, expected) == 0, test,
	      got ? got : "(undefined)");
	free(got);
}

static void test_ranges(void)
{
	static const struct {
		const char *test;
		const char *args[8];     /* after the tool's name */
		const char *macro;
		const char *expected;    /* the macro's body, or the error */
		bool is_error;
	} cases[] = {
		{ "range: default outside it", { NULL }, "TID", "0", false },
		{ "range: upper bound given", { "-t", "4194304" }, "TID", "4194304", false },
		{ "range: open range lower bound", { "-r", "1" }, "ROWS", "1", false },
		{ "range: open range has no upper bound", { "-r", "9223372036854775807" }, "ROWS",
		  "9223372036854775807", false },
		{ "range: list at both bounds", { "-P", "1,65535" }, "PORTS", "(x == 1 || x == 65535)",
		  false },
		{ "range: positional in range", { "5" }, "INTERVAL", "5", false },
		{ "range: below", { "-t", "0" }, "TID", "-t/--tid must be from 1 to 4194304, not 0",
		  true },
		{ "range: open range below", { "--rows=0" }, "ROWS", "-r/--rows must be 1 or more, not 0",
		  true },
		{ "range: list element above", { "-P", "80,99999" }, "PORTS",
		  "-P/--port must be from 1 to 65535, not 99999", true },
		{ "range: list element below", { "-P", "0" }, "PORTS",
		  "-P/--port must be from 1 to 65535, not 0", true },
		{ "range: positional below", { "0" }, "INTERVAL",
		  "the interval argument must be from 1 to 99999999, not 0", true },
		{ "range: positional above", { "100000000" }, "INTERVAL",
		  "the interval argument must be from 1 to 99999999, not 100000000", true },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[10] = { "ranged" };
		int argc = 1;
		for (int j = 0; cases[i].args[j]; j++)
			argv[argc++] = (char *)cases[i].args[j];
		expect_ranged(cases[i].test, argc, argv, cases[i].macro, cases[i].expected,
			      cases[i].is_error);
	}

	expect_header_error("header range reversed", "//! summary: s\n//! option: -x X | X int 5..1 | h\n",
			    "a range is 'MACRO int LO..HI' or 'MACRO int LO..'");
	expect_header_error("header range not numbers",
			    "//! summary: s\n//! option: -x X | X list a..b | h\n",
			    "a range is 'MACRO list LO..HI' or 'MACRO list LO..'");
	expect_header_error("header range trailing text",
			    "//! summary: s\n//! option: -x X | X int 1..5x 2 | h\n",
			    "a range is 'MACRO int LO..HI'");
}

static void expect_real(const char *test, const char *tool_name, int argc, char **argv,
			const char *name, const char *expected, bool is_error)
{
	int status;
	/* --help is among argv: no event source is chosen */
	char *got = configure_tool(tool_find(tool_name), argc, argv, name, &status);
	check((status < 0) == is_error && got && strcmp(got, expected) == 0, test,
	      got ? got : "(undefined)");
	free(got);
}

/* ext4slower is `//! alias: fsslower -t ext4`: fsslower's options with -t
 * fixed, its header under its own name; BCC's positional min_ms is -m. */
static void test_alias(void)
{
	char *ten[] = { "ext4slower", "10", "--help", NULL };
	char *both[] = { "ext4slower", "-m", "5", "7", "--help", NULL };
	char *plain[] = { "xfsslower", "--help", NULL };
	char *retype[] = { "ext4slower", "-t", "xfs", "--help", NULL };
	char *bad[] = { "nfsslower", "ten", "--help", NULL };
	char *fs_ten[] = { "fsslower", "-t", "btrfs", "10", "--help", NULL };
	expect_real("alias: min_ms positional", "ext4slower", 3, ten, "MIN_MS", "10", false);
	expect_real("alias: its file system", "ext4slower", 3, ten, "FS", "\"ext4\"", false);
	expect_real("alias: the last of -m and min_ms", "ext4slower", 5, both, "MIN_MS", "7", false);
	expect_real("alias: default min_ms", "xfsslower", 2, plain, "MIN_MS", "10", false);
	expect_real("alias: file system macro", "xfsslower", 2, plain, "FS_xfs", "1", false);
	expect_real("alias: fixed option refused", "ext4slower", 4, retype, "FS",
		    "-t/--type cannot be given: ext4slower is fsslower -t ext4", true);
	expect_real("alias: bad min_ms", "nfsslower", 3, bad, "MIN_MS",
		    "the min_ms argument needs a whole number, not 'ten'", true);
	expect_real("fsslower: min_ms positional", "fsslower", 5, fs_ten, "MIN_MS", "10", false);

	struct tool_header header;
	char *error = NULL;
	int status = tool_header_parse("btrfsslower", tool_find("btrfsslower")->text, &header, &error);
	check(status == 0 && strcmp(header.name, "btrfsslower") == 0 &&
		      strstr(header.summary, "btrfs") && header.examples.count > 0 &&
		      strstr(header.examples.items[0].text, "sonde btrfsslower"),
	      "alias: own name, summary and examples", error);
	bool type_fixed = false, min_kept = false;
	for (int i = 0; status == 0 && i < header.options.count; i++) {
		if (header.options.items[i].short_name == 't')
			type_fixed = header.options.items[i].is_fixed;
		if (header.options.items[i].short_name == 'm')
			min_kept = !header.options.items[i].is_fixed;
	}
	check(type_fixed && min_kept, "alias: -t fixed, -m not", NULL);
	free(error);
	tool_header_free(&header);
	struct tool fake = { "loop", "//! alias: nosuchtool -x\n" };
	status = tool_header_parse(fake.name, fake.text, &header, &error);
	check(status < 0 && error && strstr(error, "alias of 'nosuchtool', which is no tool"),
	      "alias: of a missing tool", error);
	free(error);
	tool_header_free(&header);
}

/* A `requires:` path that is missing stops the tool with its sentence. */
static void test_requires(void)
{
	struct tool tool = { "needy", "//! summary: s\n"
				      "//! requires: /nonexistent/sonde-file | This system has no sonde file.\n"
				      "BEGIN { exit(); }\n" };
	char *argv[] = { "needy", NULL };
	struct tool_run run;
	struct strbuf notes;
	char *error = NULL;
	strbuf_init(&notes);
	int status = tool_configure(&tool, 1, argv, &run, &notes, &error);
	check(status < 0 && error && strcmp(error, "This system has no sonde file.") == 0,
	      "requires a missing file", error ? error : "(accepted)");
	free(error);
	strbuf_free(&notes);
	tool_run_free(&run);
}

/* `source: when MACRO: ...` is needed only with its option; `ksym:NAME` is
 * available when /proc/kallsyms lists NAME. */
static int configure_sources(const char *sources, int argc, char **argv, char **error)
{
	char *text = xasprintf("//! summary: s\n"
			       "//! option: -l --loss | LOSS flag | Loss probes\n"
			       "%sBEGIN { exit(); }\n", sources);
	struct tool tool = { "cond", text };
	struct tool_run run;
	struct strbuf notes;
	strbuf_init(&notes);
	*error = NULL;
	int status = tool_configure(&tool, argc, argv, &run, &notes, error);
	strbuf_free(&notes);
	tool_run_free(&run);
	free(text);
	return status;
}

static void test_conditional_sources(void)
{
	char *plain[] = { "cond", NULL };
	char *loss[] = { "cond", "-l", NULL };
	const char *missing = "//! source: when LOSS: kprobe:sonde_no_such_function\n";
	char *error;
	int status = configure_sources(missing, 1, plain, &error);
	check(status == 0, "conditional source not needed without its option", error);
	free(error);
	status = configure_sources(missing, 2, loss, &error);
	check(status < 0 && error &&
		      strncmp(error, "-l/--loss needs kprobe:sonde_no_such_function, which this kernel "
			      "lacks: ", 66) == 0,
	      "conditional source names its option", error ? error : "(accepted)");
	free(error);
	status = configure_sources("//! source: when LOSS: ksym:sonde_no_such_symbol\n", 2, loss,
				   &error);
	check(status < 0 && error && strstr(error, "has no symbol sonde_no_such_symbol"),
	      "ksym source missing", error ? error : "(accepted)");
	free(error);
	status = configure_sources("//! source: ksym:_stext\n", 1, plain, &error);
	check(status == 0, "ksym source present", error);
	free(error);
}

static void expect_substitution(const char *test, const char *text,
				const struct predefined_macro *macros, int count, const char *expected)
{
	struct preprocessed pre = { 0 };
	preprocess_program(text, NULL, macros, count, &pre, NULL);
	check(strcmp(pre.text, expected) == 0, test, pre.text);
	preprocessed_free(&pre);
}

static void test_substitution(void)
{
	static const struct predefined_macro macros[] = {
		{ "INTERVAL", NULL, "5" },
		{ "NAME", NULL, "\"bash\"" },
		{ "PORTS", "x", "(x == 80)" },
	};
	expect_substitution("object macro keeps columns", "interval:s:INTERVAL { }", macros, 3,
			    "interval:s:5        { }");
	expect_substitution("longer replacement", "BEGIN { $n = NAME; }", macros, 3,
			    "BEGIN { $n = \"bash\"; }");
	expect_substitution("function-like macro", "/PORTS(args->dport)/", macros, 3,
			    "/(args->dport == 80)/");
	expect_substitution("not in strings or comments",
			    "printf(\"INTERVAL\"); // NAME\n/* PORTS(1) */", macros, 3,
			    "printf(\"INTERVAL\"); // NAME\n/* PORTS(1) */");
	expect_substitution("not inside other names", "INTERVALS NAME_2 xNAME", macros, 3,
			    "INTERVALS NAME_2 xNAME");
	expect_substitution("seen by ifdef", "#ifdef INTERVAL\nyes\n#else\nno\n#endif\n", macros, 3,
			    "               \nyes\n     \n  \n      \n");
}

/* Instruction count of a program, or -1 when it does not compile. */
static int instructions_of(const char *text)
{
	struct source source = { .filename = "stdin", .text = text };
	struct compile_options options = { .max_strlen = 64 };
	struct program program = { 0 };
	struct diag diag;
	FILE *sink = fopen("/dev/null", "w");
	int count = -1;

	diag_init(&diag, &source, sink);
	if (compile_program(&source, &options, &program, &diag) == 0) {
		count = 0;
		for (int i = 0; i < program.probes.count; i++)
			count += program.probes.items[i].insn_count;
	}
	compile_free(&program);
	fclose(sink);
	return count;
}

static void test_folding(void)
{
	int plain = instructions_of("tracepoint:sched:sched_switch { @n = count(); }");
	int off = instructions_of("tracepoint:sched:sched_switch /0 == 0 || pid == 0/ "
				  "{ if (0) { printf(\"x\\n\"); } if (\"\" != \"\" && comm == \"\") { exit(); } "
				  "@n = count(); }");
	int on = instructions_of("tracepoint:sched:sched_switch /5 == 0 || pid == 5/ { @n = count(); }");
	char detail[64];
	snprintf(detail, sizeof(detail), "%d and %d instructions", plain, off);
	check(plain > 0 && off == plain, "filters on constants cost nothing", detail);
	snprintf(detail, sizeof(detail), "%d and %d instructions", plain, on);
	check(on > plain, "a filter that is on costs instructions", detail);
	int ternary = instructions_of("BEGIN { printf(\"%d\\n\", 1 < 2 ? 7 : 8); }");
	int literal = instructions_of("BEGIN { printf(\"%d\\n\", 7); }");
	check(ternary == literal && literal > 0, "constant ternary folds", NULL);
}

/* Sources chosen by BTF fields: 6.18 renamed cfs_rq.nr_running to nr_queued. */
static void test_btf_sources(void)
{
	struct tool tool = { "renamed",
		"//! summary: s\n"
		"//! source: NR_QUEUED=btf:cfs_rq.nr_queued | NR_RUNNING=btf:cfs_rq.nr_running\n"
		"BEGIN { exit(); }\n" };
	struct tool_run run;
	struct strbuf notes;
	char *error = NULL;
	char *argv[] = { "renamed", NULL };
	bool queued = false, running = false;

	strbuf_init(&notes);
	int status = tool_configure(&tool, 1, argv, &run, &notes, &error);
	for (int i = 0; status == 0 && i < run.macros.count; i++) {
		queued |= strcmp(run.macros.items[i].name, "NR_QUEUED") == 0;
		running |= strcmp(run.macros.items[i].name, "NR_RUNNING") == 0;
	}
	check(status == 0 && queued != running, "btf field source picks one", error);
	tool_run_free(&run);
	free(error);
	error = NULL;
	struct tool missing = { "missing",
		"//! summary: s\n//! source: btf:cfs_rq.no_such_field\nBEGIN { exit(); }\n" };
	status = tool_configure(&missing, 1, argv, &run, &notes, &error);
	check(status < 0 && error && strstr(error, "has no field no_such_field"),
	      "btf field source missing", error);
	tool_run_free(&run);
	free(error);
	strbuf_free(&notes);
}

int main(void)
{
	test_header();
	test_header_errors();
	test_options();
	test_ranges();
	test_alias();
	test_requires();
	test_conditional_sources();
	test_substitution();
	test_folding();
	test_btf_sources();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
