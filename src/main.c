/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sonde's command line: reads the options and the program, then runs the
 * pipeline (compile_program, then runtime_run) and turns the outcome into
 * an exit status. Nothing else lives here.
 *
 *   sonde [options] -e 'program' [args...]
 *   sonde [options] program-file [args...]     ("-" reads the program from stdin)
 *
 * Options may come anywhere, before or after the program file, as with
 * bpftrace (GNU getopt permutes them): `sonde tool.bt -c CMD` runs CMD. The
 * words that are not options are the program file and the script's own
 * $1..$N; `--` ends the options, so a parameter that starts with a dash
 * goes after it.
 *
 * bpftrace's environment variables (BPFTRACE_MAX_STRLEN, ...) are read as
 * aliases of sonde's own (SONDE_MAX_STRLEN, ...), which win when both are
 * set; one sonde has no use for is named in a warning, never ignored
 * silently.
 *
 * -c CMD is forked before compiling (the program may use its pid as
 * `cpid`) and waits on a pipe until the probes are attached; if sonde
 * fails first, the pipe closes and the child leaves without running CMD.
 */
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/diag.h"
#include "common/program.h"
#include "common/settings.h"
#include "common/util.h"
#include "compiler/compiler.h"
#include "kernel/btf.h"
#include "kernel/features.h"
#include "probes/listing.h"
#include "probes/provider.h"
#include "render/commands.h"
#include "runtime/child.h"
#include "runtime/runtime.h"
#include "serve/serve.h"
#include "toolkit/tool.h"

#define SONDE_VERSION "0.1.0"
#define MAX_STRLEN_LIMIT 1024

enum long_option {
	OPT_UNSAFE = 256,
	OPT_DRY_RUN,
	OPT_VERSION,
	OPT_INFO,
};

struct cli {
	const char *program_text;   /* -e */
	const char *program_path;   /* file, or "-" */
	char **args;                /* $1..$N */
	int arg_count;
	char **named;               /* getopt()'s --NAME[=VALUE] after the program, without "--" */
	int named_count;
	const char *command;        /* -c */
	const char *pid_text;       /* -p */
	const char *output_path;    /* -o */
	bool list;
	bool json;
	bool quiet;
	bool unsafe;
	bool dry_run;
	bool dump;
	int verbose;
	int helper_checks;          /* -k, -kk */
	/* set by tools (src/toolkit/) */
	bool tool;                  /* a tool: lines joined, no maps printed at exit */
	const struct predefined_macro *macros; /* option values, as preprocessor macros */
	int macro_count;
	pid_t watch_pid;            /* stop when this process exits (without -p's filter) */
	int max_strlen;             /* string size when SONDE_MAX_STRLEN is not set; 0 = default */
	const struct map_size *map_sizes; /* a tool's map sizes (`//! size:`) */
	int map_size_count;
	struct picture_request picture; /* a tool's --svg / --heatmap */
	const struct serve_options *serve; /* sonde serve; NULL otherwise */
};

static const char usage_text[] =
	"usage: sonde [options] -e 'program' [args...]\n"
	"       sonde [options] program-file [args...]\n"
	"       sonde [options] - [args...]       (program read from stdin)\n"
	"       sonde -l [-v] [-p PID] [pattern]\n"
	"       sonde TOOL [tool options]        (sonde tools lists them)\n"
	"       sonde providers                  (probe types and their short names)\n"
	"       sonde flamegraph [options] [FILE]\n"
	"                                        (stacks drawn as an SVG flame graph)\n"
	"       sonde heatmap [options] [FILE]   (JSON histograms drawn as a heat map)\n"
	"       sonde serve [--listen ADDR:PORT] [--label @MAP=NAME,...] PROGRAM|TOOL [args...]\n"
	"                                        (the maps as a Prometheus target, at /metrics)\n"
	"\n"
	"Compiles a bpftrace program to BPF and runs it. Arguments after the\n"
	"program are its positional parameters $1..$N; after \"--\", those of the\n"
	"form --NAME[=VALUE] are named arguments, read by getopt(\"NAME\"[, default]);\n"
	"-- --help lists those the program reads.\n"
	"\n"
	"options:\n"
	"  -e PROGRAM     run this program\n"
	"  -c CMD         run CMD once the probes are attached; stop when it exits\n"
	"  -p PID         trace only process PID; stop when it exits\n"
	"  -l [PATTERN]   list probes (all, or those matching PATTERN, e.g. 'tracepoint:sched:*')\n"
	"  -v             verbose: program sizes and verifier statistics; with -l, probe arguments\n"
	"  -d             print the AST, IR and BPF instructions on stderr\n"
	"  -f FORMAT      output format: text (default) or json\n"
	"  -o FILE        write the program's output to FILE\n"
	"  -q             quiet: no \"Attached N probes\" line\n"
	"  -k, -kk        report failed reads of memory and map updates, with their place\n"
	"  --unsafe       allow unsafe builtins such as system()\n"
	"  --dry-run      compile and load into the verifier, attach nothing\n"
	"  --info         report what this kernel supports\n"
	"  -h, --help     show this help\n"
	"  -V, --version  show the version\n"
	"\n"
	"environment:\n"
	"  SONDE_MAX_STRLEN     bytes of a string value (default 64, at most 1024)\n"
	"  SONDE_RINGBUF_SIZE   bytes of the event ring buffer (default 1m; power of two)\n"
	"  SONDE_MAX_MAP_ENTRIES entries of each map (default 4096, at most 16777216)\n"
	"  SONDE_STACK_STORAGE_SIZE stacks each stack map holds (default 16384)\n"
	"  SONDE_STACK_MODE     kstack/ustack's default mode: bpftrace, perf or raw\n"
	"  SONDE_PRINT_MAPS_ON_EXIT  0 or false: no maps printed at exit\n"
	"  SONDE_MAX_CAT_BYTES  bytes cat() prints at most (default 10240)\n"
	"  bpftrace's names for these (BPFTRACE_MAX_STRLEN, BPFTRACE_MAX_MAP_KEYS,\n"
	"  BPFTRACE_PERF_RB_PAGES, ...) are read too; sonde's win when both are set.\n"
	"  A program's config = { ... } block sets the same; the environment wins.\n";

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die_usage(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fputs("sonde: ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputs("\n\n", stderr);
	}
	fputs(usage_text, stderr);
	exit(1);
}

/* libbpf speaks only when asked to (-vv): sonde reports its own errors. */
static int main_verbose_level;

static int main_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (main_verbose_level < 2)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* A bare word that names neither a tool nor a file: said before the
 * options after it are read (GNU permutation would otherwise complain
 * about a tool's option first, `sonde nosuchtool -x`). */
static void report_no_tool_or_file(const char *word)
{
	fprintf(stderr, "sonde: there is no tool or program file named '%s' "
		"(sonde tools lists the tools)\n", word);
}

static void parse_cli(int argc, char **argv, struct cli *cli)
{
	static const struct option long_options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "info", no_argument, NULL, OPT_INFO },
		{ "unsafe", no_argument, NULL, OPT_UNSAFE },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ NULL, 0, NULL, 0 },
	};
	int option;

	/* no '+': options after the program file are options too, as bpftrace
	 * reads them; "--" ends them */
	while ((option = getopt_long(argc, argv, "e:c:p:lvdf:o:qkhV", long_options, NULL)) != -1) {
		switch (option) {
		case 'e':
			cli->program_text = optarg;
			break;
		case 'c':
			cli->command = optarg;
			break;
		case 'p':
			cli->pid_text = optarg;
			break;
		case 'l':
			cli->list = true;
			break;
		case 'v':
			cli->verbose++;
			break;
		case 'd':
			cli->dump = true;
			break;
		case 'f':
			if (strcmp(optarg, "json") == 0)
				cli->json = true;
			else if (strcmp(optarg, "text") == 0)
				cli->json = false;
			else
				die_usage("unknown output format '%s' (use text or json)", optarg);
			break;
		case 'o':
			cli->output_path = optarg;
			break;
		case 'q':
			cli->quiet = true;
			break;
		case 'k':
			cli->helper_checks++;
			break;
		case OPT_UNSAFE:
			cli->unsafe = true;
			break;
		case OPT_DRY_RUN:
			cli->dry_run = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'V':
		case OPT_VERSION:
			printf("sonde %s\n", SONDE_VERSION);
			exit(0);
		case OPT_INFO:
			exit(features_print_info(stdout) == 0 ? 0 : 1);
		default:
			/* getopt has already said what was wrong. */
			die_usage(NULL);
		}
	}
	if (!cli->program_text && !cli->list) {
		if (optind >= argc)
			die_usage("no program given (use -e 'program' or a program file)");
		cli->program_path = argv[optind++];
	}
	/* As current bpftrace: of the words after the program, those starting
	 * with "--" (given after "--", which ends sonde's options) are getopt()'s
	 * named arguments, the others the positional parameters $1..$N. */
	static char **words; /* both lists, kept for the whole run */
	size_t slots = (size_t)(argc - optind) + 1;
	free(words);
	words = xcalloc(2 * slots, sizeof(*words));
	cli->args = words;
	cli->named = words + slots;
	for (int i = optind; i < argc; i++) {
		if (strncmp(argv[i], "--", 2) != 0) {
			cli->args[cli->arg_count++] = argv[i];
			continue;
		}
		if (argv[i][2] == '\0' || argv[i][2] == '=')
			die_usage("'%s' is not a named argument (use --NAME or --NAME=VALUE)", argv[i]);
		cli->named[cli->named_count++] = argv[i] + 2;
	}
}

/*
 * Reads the program file (path, or stdin for "-") through read_source_fd, and
 * its length (NUL bytes in it are the compiler's to report);
 * on failure says in one sentence what was wrong and returns NULL.
 */
static char *read_program(const char *path, size_t *length)
{
	const char *name = strcmp(path, "-") == 0 ? "stdin" : path;
	char *text = NULL;
	int fd = 0, error;
	struct stat status;

	if (strcmp(path, "-") != 0) {
		/* Opening a device can have effects (a tape rewinds, a FIFO waits
		 * for its writer, as it should): only a terminal is opened, without
		 * blocking and without becoming the controlling one. */
		int flags = O_RDONLY | O_CLOEXEC;
		bool device = stat(path, &status) == 0 &&
			      (S_ISCHR(status.st_mode) || S_ISBLK(status.st_mode));
		if (device)
			flags |= O_NONBLOCK | O_NOCTTY;
		fd = open(path, flags);
		if (fd >= 0 && (flags & O_NONBLOCK) && !isatty(fd)) {
			close(fd);
			error = -ENODEV;
			goto fail;
		}
		if (fd >= 0 && (flags & O_NONBLOCK))
			fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		if (fd < 0) {
			if (errno == ENOENT && !strchr(path, '/')) {
				report_no_tool_or_file(path);
				return NULL;
			}
			error = -errno;
			goto fail;
		}
	}
	error = read_source_fd(fd, &text, length);
	if (fd != 0)
		close(fd);
	if (error == 0)
		return text;
fail:
	if (error == -ENODEV)
		fprintf(stderr, "sonde: cannot read the program from %s: it is a device; a program "
			"comes from a file, a pipe or a terminal\n", name);
	else if (error == -EFBIG)
		fprintf(stderr, "sonde: cannot read the program from %s: it is larger than %u MiB\n",
			name, SOURCE_SIZE_MAX >> 20);
	else
		fprintf(stderr, "sonde: cannot read the program from %s: %s\n", name, strerror(-error));
	return NULL;
}

/* sonde variables set from bpftrace's (import_bpftrace_env): a bad value is
 * reported under the name the user wrote. */
static struct env_alias {
	const char *sonde_name;
	const char *bpftrace_name;
} env_aliases[16];
static int env_alias_count;

static const char *env_display_name(const char *name)
{
	for (int i = 0; i < env_alias_count; i++) {
		if (strcmp(env_aliases[i].sonde_name, name) == 0)
			return env_aliases[i].bpftrace_name;
	}
	return name;
}

/*
 * bpftrace's environment variables, read as sonde's: BPFTRACE_MAX_STRLEN
 * sets SONDE_MAX_STRLEN unless that is set too (sonde's own wins), with
 * the value converted where the two differ (perf_rb_pages counts pages).
 * A variable sonde has no use for, or does not know, is named in a
 * warning: a setting the user made is never dropped without a word.
 */
static int import_bpftrace_env(void)
{
	extern char **environ;
	VEC(char *) names = { 0 };
	int status = 0;

	/* names first: setenv() may move environ while it is walked */
	for (char **entry = environ; entry && *entry; entry++) {
		const char *equals = strchr(*entry, '=');
		if (strncmp(*entry, "BPFTRACE_", 9) == 0 && equals)
			vec_push(&names, xstrndup(*entry, (size_t)(equals - *entry)));
	}
	for (int i = 0; i < names.count; i++) {
		const char *name = names.items[i], *value = getenv(name);
		const struct setting *setting = setting_find_bpftrace_env(name);
		char *converted, *error = NULL;

		if (!value || !*value)
			continue;
		if (!setting) {
			fprintf(stderr, "sonde: warning: %s is not a bpftrace setting sonde knows; "
				"it has no effect\n", name);
		} else if (setting->id == SETTING_UNUSED) {
			fprintf(stderr, "sonde: warning: %s has no effect: %s\n", name, setting->reason);
		} else if (!getenv(setting->sonde_env) &&
			   env_alias_count < (int)(sizeof(env_aliases) / sizeof(env_aliases[0]))) {
			converted = setting_convert(setting, value, &error);
			if (!converted) {
				fprintf(stderr, "sonde: %s: %s\n", name, error);
				free(error);
				status = -1;
				continue;
			}
			setenv(setting->sonde_env, converted, 1);
			free(converted);
			env_aliases[env_alias_count++] = (struct env_alias){
				setting->sonde_env, xstrdup(name) };
		}
	}
	for (int i = 0; i < names.count; i++)
		free(names.items[i]);
	free(names.items);
	return status;
}

/* Environment variable `name` as a decimal number from 1 to limit, into
 * *value (left alone when unset). Digits only: " 64", "+64", "1k", "0x10"
 * or "-1" are mistakes to report in one sentence naming the variable, not
 * values to read some way silently. */
static int parse_env_number(const char *name, long long limit, long long *value)
{
	const char *text = getenv(name);
	char *end;
	long long number;

	if (!text || !*text)
		return 0;
	errno = 0;
	number = isdigit((unsigned char)text[0]) ? strtoll(text, &end, 10) : 0;
	if (!isdigit((unsigned char)text[0]) || errno || *end || number < 1 || number > limit) {
		fprintf(stderr, "sonde: %s must be a number from 1 to %lld, not '%s'\n",
			env_display_name(name), limit, text);
		return -1;
	}
	*value = number;
	return 0;
}

/* SONDE_MAX_STRLEN, else a tool's preferred size; 0 leaves it to the
 * program's config block, else to the compiler's default. */
static int parse_max_strlen(int *max_strlen, int preferred)
{
	long long value = preferred;
	int err = parse_env_number("SONDE_MAX_STRLEN", MAX_STRLEN_LIMIT, &value);
	*max_strlen = (int)value;
	return err;
}

/* A variable that takes one of a few words (SONDE_STACK_MODE): *value is
 * the word, or NULL when unset. */
static int parse_env_word(const char *name, const char *const *words, const char **value)
{
	const char *text = getenv(name);

	*value = NULL;
	if (!text || !*text)
		return 0;
	for (const char *const *word = words; *word; word++) {
		if (strcmp(text, *word) == 0) {
			*value = *word;
			return 0;
		}
	}
	fprintf(stderr, "sonde: %s must be one of", env_display_name(name));
	for (const char *const *word = words; *word; word++)
		fprintf(stderr, "%s %s", word == words ? "" : ",", *word);
	fprintf(stderr, ", not '%s'\n", text);
	return -1;
}

/* SONDE_PRINT_MAPS_ON_EXIT: 1 (yes) or -1 (no) into *value; 0 when unset. */
static int parse_env_bool(const char *name, int *value)
{
	static const char *const words[] = { "1", "0", "true", "false", NULL };
	const char *word;

	*value = 0;
	if (parse_env_word(name, words, &word) < 0)
		return -1;
	if (word)
		*value = strcmp(word, "1") == 0 || strcmp(word, "true") == 0 ? 1 : -1;
	return 0;
}

/* An unset variable leaves *value 0 (the default). */
static int parse_env_count(const char *name, long long limit, uint32_t *value)
{
	long long number = 0;
	int err = parse_env_number(name, limit, &number);
	*value = (uint32_t)number;
	return err;
}

static int parse_pid(const char *text, pid_t *pid)
{
	char *end;
	long value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno || *end || end == text || value <= 0 || value > 0x3fffffff) {
		fprintf(stderr, "sonde: -p needs a process id, not '%s'\n", text);
		return -1;
	}
	if (kill((pid_t)value, 0) != 0 && errno == ESRCH) {
		fprintf(stderr, "sonde: there is no process with pid %ld\n", value);
		return -1;
	}
	*pid = (pid_t)value;
	return 0;
}

/*
 * Without the privileges to load BPF, tracefs, kallsyms' addresses and the
 * rest fail each in its own way: say the one sentence that matters first,
 * before anything is read, compiled or written.
 */
static bool have_privileges(void)
{
	char *error = NULL;
	int err = features_check_bpf(&error);

	free(error);
	if (err == -EPERM || err == -EACCES) {
		fprintf(stderr, "%s\n", FEATURES_ROOT_MESSAGE);
		return false;
	}
	return true;
}

/* -l with a program: the probes it would attach. */
/* --name=KIND, or --name[=BOOL] for a flag (a bare --name sets it). */
static char *program_option_spelling(const struct program_option *option)
{
	bool flag = strcmp(option->kind, "BOOL") == 0;
	return xasprintf(flag ? "--%s[=%s]" : "--%s=%s", option->name, option->kind);
}

/* `-- --help`: the named arguments the program reads with getopt(). */
static void print_program_options(const struct program *program)
{
	int width = 0;

	if (program->options.count == 0) {
		printf("The program reads no named options (it has no getopt()).\n");
		return;
	}
	for (int i = 0; i < program->options.count; i++) {
		char *spelling = program_option_spelling(&program->options.items[i]);
		if ((int)strlen(spelling) > width)
			width = (int)strlen(spelling);
		free(spelling);
	}
	printf("Named options of the program (given after --):\n");
	for (int i = 0; i < program->options.count; i++) {
		const struct program_option *option = &program->options.items[i];
		char *spelling = program_option_spelling(option);
		printf("  %-*s  %s%s(default %s)\n", width, spelling,
		       option->description ? option->description : "",
		       option->description ? " " : "", option->fallback);
		free(spelling);
	}
}

static void list_program_probes(const struct program *program)
{
	for (int i = 0; i < program->probes.count; i++) {
		const char *name = program->probes.items[i].name;
		bool seen = false;

		for (int j = 0; j < i && !seen; j++)
			seen = strcmp(program->probes.items[j].name, name) == 0;
		if (!seen)
			printf("%s\n", name);
	}
}

/*
 * The pipeline, for a program given as text (or NULL: read it as cli says):
 * compile, then run. Frees text.
 */
static int run_program(const struct cli *cli, char *text, const char *filename);

/*
 * `sonde TOOL [options]` (or a link named TOOL): the tool's command line
 * gives its program, macros and settings; the pipeline is the same.
 */
static int run_tool(const struct tool *tool, int argc, char **argv,
		    const struct serve_options *serve)
{
	struct tool_run run;
	struct strbuf notes;
	char *error = NULL;
	int status;

	strbuf_init(&notes);
	status = tool_configure(tool, argc, argv, &run, &notes, &error);
	/* Choosing event sources reads tracefs: without privileges that
	 * fails, but for a reason that is not the one to give. */
	if (status < 0 && !have_privileges()) {
		free(error);
		strbuf_free(&notes);
		tool_run_free(&run);
		return 1;
	}
	if (status < 0) {
		fprintf(stderr, "%s: %s\n", tool->name, error);
		free(error);
		strbuf_free(&notes);
		tool_run_free(&run);
		return 1;
	}
	if (run.help || run.source || run.man) {
		if (run.help)
			tool_print_help(&run.header, stdout);
		else if (run.source)
			fputs(tool_run_program(&run), stdout);
		else
			tool_print_man(&run.header, stdout);
		strbuf_free(&notes);
		tool_run_free(&run);
		return 0;
	}
	if (run.verbose && notes.data)
		fputs(notes.data, stderr);
	strbuf_free(&notes);

	struct cli cli;

	memset(&cli, 0, sizeof(cli));
	cli.tool = true;
	cli.serve = serve;
	cli.json = run.json;
	cli.dry_run = run.dry_run;
	cli.verbose = run.verbose > 1 ? run.verbose - 1 : 0;
	cli.macros = run.macros.items;
	cli.macro_count = run.macros.count;
	cli.watch_pid = run.watch_pid;
	cli.max_strlen = run.header.max_strlen;
	if (run.picture_path) {
		cli.picture.kind = strcmp(run.header.picture_kind, "flamegraph") == 0
					   ? PICTURE_FLAMEGRAPH : PICTURE_HEATMAP;
		cli.picture.path = run.picture_path;
		cli.picture.title = run.header.picture_title;
		cli.picture.count_name = run.header.picture_count_name;
	}
	cli.map_sizes = run.map_sizes.items;
	cli.map_size_count = run.map_sizes.count;
	main_verbose_level = cli.verbose;
	if (!have_privileges()) {
		tool_run_free(&run);
		return 1;
	}
	status = run_program(&cli, xstrdup(tool_run_program(&run)), tool->name);
	tool_run_free(&run);
	return status;
}

/*
 * A closed stdin, stdout or stderr would be taken by the next file sonde
 * opens (the epoll descriptor, a map), and the program's output would be
 * written into it. Each closed one gets /dev/null, opened the wrong way
 * round, so a write to it still fails with EBADF as it would have, and is
 * reported.
 */
static void hold_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
	}
}

static int tools_command(int argc, char **argv)
{
	tool_print_list(stdout);
	return 0;
}

static const char serve_usage_text[] =
	"usage: sonde serve [--listen ADDR:PORT] [--web.config.file FILE] [--label @MAP=NAME[,NAME...]]...\n"
	"                   -e 'program' [args...]\n"
	"       sonde serve [serve options] [program options] program-file [args...]\n"
	"       sonde serve [serve options] TOOL [tool options]\n"
	"\n"
	"Runs the program or tool until stopped and answers GET /metrics with its\n"
	"maps' current values in the Prometheus text format (OpenMetrics when asked):\n"
	"@m is sonde_m (a tool's, sonde_TOOL_m); keys are labels. What was lost is\n"
	"counted as sonde_lost_events_total, sonde_lost_map_updates_total,\n"
	"sonde_lost_stacks_total and sonde_lost_probe_runs_total.\n"
	"\n"
	"serve options:\n"
	"  --listen ADDR:PORT   where to listen (default " SERVE_DEFAULT_LISTEN "; :PORT for every\n"
	"                       address, [::1]:PORT for IPv6, port 0 for any free port)\n"
	"  --label @M=A,B       name the labels of @M's key parts A and B (default: the\n"
	"                       builtin used as the key, such as comm or pid, else key, key0...)\n"
	"  --web.config.file FILE, --web-config FILE\n"
	"                       TLS and basic authentication, in the web config format of\n"
	"                       Prometheus' exporters (tls_server_config, basic_auth_users)\n";

/* The value of --NAME VALUE or --NAME=VALUE at argv[*i]; NULL if argv[*i]
 * is not that option. Advances *i past what it used. */
static const char *serve_option_value(int argc, char **argv, int *i, const char *name)
{
	size_t length = strlen(name);

	if (strncmp(argv[*i], name, length) != 0)
		return NULL;
	if (argv[*i][length] == '=')
		return argv[(*i)++] + length + 1;
	if (argv[*i][length] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "sonde: serve: %s needs a value\n", name);
		exit(1);
	}
	*i += 2;
	return argv[*i - 1];
}

/*
 * `sonde serve [serve options] PROGRAM|TOOL ...`: the serve options, then a
 * tool's command line or a program's, exactly as they would be given
 * without serve.
 */
static int serve_command(int argc, char **argv)
{
	struct serve_options serve;
	const struct tool *tool;
	int i = 1, status;

	memset(&serve, 0, sizeof(serve));
	while (i < argc) {
		const char *value;
		char *error = NULL;

		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			fputs(serve_usage_text, stdout);
			serve_options_free(&serve);
			return 0;
		} else if ((value = serve_option_value(argc, argv, &i, "--listen"))) {
			serve.listen = value;
		} else if ((value = serve_option_value(argc, argv, &i, "--web.config.file")) ||
			   (value = serve_option_value(argc, argv, &i, "--web-config"))) {
			if (serve.web) {
				fprintf(stderr, "sonde: serve: --web.config.file is given twice\n");
				serve_options_free(&serve);
				return 1;
			}
			/* read and checked now: a bad file stops sonde before it compiles */
			if (web_config_load(value, &serve.web, &error) < 0) {
				fprintf(stderr, "%s\n", error);
				free(error);
				serve_options_free(&serve);
				return 1;
			}
		} else if ((value = serve_option_value(argc, argv, &i, "--label"))) {
			if (serve_add_label(&serve, value, &error) < 0) {
				fprintf(stderr, "sonde: serve: %s\n", error);
				free(error);
				serve_options_free(&serve);
				return 1;
			}
		} else {
			break;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "sonde: serve: no program or tool given\n\n%s", serve_usage_text);
		serve_options_free(&serve);
		return 1;
	}
	if ((tool = tool_find(argv[i]))) {
		serve.tool = tool->name;
		status = run_tool(tool, argc - i, argv + i, &serve);
		serve_options_free(&serve);
		return status;
	}

	/* the program's own command line, as `sonde` would read it */
	struct cli cli;
	char **words = xcalloc((size_t)(argc - i + 2), sizeof(char *));

	words[0] = argv[0];
	memcpy(words + 1, argv + i, (size_t)(argc - i) * sizeof(char *));
	memset(&cli, 0, sizeof(cli));
	parse_cli(argc - i + 1, words, &cli);
	cli.serve = &serve;
	main_verbose_level = cli.verbose;
	status = 1;
	if (cli.list)
		fprintf(stderr, "sonde: serve: -l lists probes; it serves nothing\n");
	else if (have_privileges())
		status = run_program(&cli, NULL, NULL);
	free(words);
	serve_options_free(&serve);
	return status;
}

/* One line per probe type: its name, then the aliases it may be written
 * with ("tracepoint t"). Needs no privileges, so shell completion can ask. */
static int providers_command(int argc, char **argv)
{
	for (const struct provider *const *p = provider_table; *p; p++) {
		printf("%s", (*p)->name);
		for (const char *const *alias = (*p)->aliases; *alias; alias++)
			printf(" %s", *alias);
		printf("\n");
	}
	return 0;
}

/* `sonde WORD ...` for words that are commands of their own rather than
 * programs or tools; each gets the words from WORD on. */
static const struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
} subcommands[] = {
	{ "tools", tools_command },
	{ "providers", providers_command },
	{ "flamegraph", flamegraph_command },
	{ "heatmap", heatmap_command },
	{ "serve", serve_command },
};

int main(int argc, char **argv)
{
	struct cli cli;
	const char *invoked = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	const struct tool *tool;

	hold_standard_fds();
	libbpf_set_print(main_libbpf_print);
	if (import_bpftrace_env() < 0)
		return 1;
	/* a link named after a tool runs it; so does `sonde TOOL` */
	if (strcmp(invoked, "sonde") != 0 && (tool = tool_find(invoked)))
		return run_tool(tool, argc, argv, NULL);
	for (size_t i = 0; argc > 1 && i < sizeof(subcommands) / sizeof(subcommands[0]); i++) {
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].run(argc - 1, argv + 1);
	}
	if (argc > 1 && (tool = tool_find(argv[1])))
		return run_tool(tool, argc - 1, argv + 1, NULL);

	if (argc > 1 && argv[1][0] != '-' && !strchr(argv[1], '/') && access(argv[1], F_OK) != 0 &&
	    errno == ENOENT) {
		report_no_tool_or_file(argv[1]);
		return 1;
	}
	memset(&cli, 0, sizeof(cli));
	parse_cli(argc, argv, &cli);
	main_verbose_level = cli.verbose;
	if (!have_privileges())
		return 1;

	if (cli.list && !cli.program_text) {
		struct stat file_status;

		/* -l FILE lists the probes of a program, -l PATTERN those of the kernel. */
		if (cli.arg_count == 0 || stat(cli.args[0], &file_status) != 0 ||
		    !S_ISREG(file_status.st_mode)) {
			pid_t list_pid = 0;

			/* bpftrace takes options after the pattern too: -l 'usdt:*' -p PID */
			for (int i = 1; i < cli.arg_count; i++) {
				if (strcmp(cli.args[i], "-p") == 0 && i + 1 == cli.arg_count)
					die_usage("-p needs a process id");
				else if (strcmp(cli.args[i], "-p") == 0)
					cli.pid_text = cli.args[++i];
				else if (strcmp(cli.args[i], "-v") == 0)
					cli.verbose++;
				else
					die_usage("unexpected '%s' after the -l pattern", cli.args[i]);
			}
			if (cli.pid_text && parse_pid(cli.pid_text, &list_pid) < 0)
				return 1;
			struct strbuf errors;
			strbuf_init(&errors);
			int status = probes_list(cli.arg_count > 0 ? cli.args[0] : NULL, list_pid,
						 cli.verbose > 0, stdout, &errors);
			fflush(stdout);
			for (char *line = errors.data, *end; line && *line; line = end + 1) {
				end = strchr(line, '\n');
				fprintf(stderr, "sonde: %.*s\n", (int)(end - line), line);
			}
			strbuf_free(&errors);
			return status;
		}
		cli.program_path = cli.args[0];
		cli.args++;
		cli.arg_count--;
	}

	return run_program(&cli, NULL, NULL);
}

static int run_program(const struct cli *cli_in, char *text, const char *filename)
{
	struct cli cli = *cli_in;
	struct compile_options compile_options;
	struct runtime_options runtime_options;
	struct source source = { 0 };
	struct program program;
	struct diag diag;
	pid_t target_pid = 0, child_pid = 0;
	int release_fd = -1;
	int max_strlen;
	uint32_t max_map_entries, stack_storage_size, max_cat_bytes;
	static const char *const stack_modes[] = { "bpftrace", "perf", "raw", NULL };
	static const char *const missing_modes[] = { "error", "warn", "ignore", NULL };
	const char *stack_mode, *missing_probes;
	int print_maps_on_exit;
	int status = 1;

	if (parse_max_strlen(&max_strlen, cli.max_strlen) < 0 ||
	    parse_env_count("SONDE_MAX_MAP_ENTRIES", MAP_ENTRIES_LIMIT, &max_map_entries) < 0 ||
	    parse_env_count("SONDE_STACK_STORAGE_SIZE", MAP_ENTRIES_LIMIT, &stack_storage_size) < 0 ||
	    parse_env_count("SONDE_MAX_CAT_BYTES", 1ll << 30, &max_cat_bytes) < 0 ||
	    parse_env_word("SONDE_STACK_MODE", stack_modes, &stack_mode) < 0 ||
	    parse_env_word("SONDE_MISSING_PROBES", missing_modes, &missing_probes) < 0 ||
	    parse_env_bool("SONDE_PRINT_MAPS_ON_EXIT", &print_maps_on_exit) < 0 ||
	    (cli.pid_text && parse_pid(cli.pid_text, &target_pid) < 0)) {
		free(text);
		return 1;
	}

	if (text) {
		source.filename = filename;
	} else if (cli.program_text) {
		text = xstrdup(cli.program_text);
		source.filename = "stdin";
	} else {
		text = read_program(cli.program_path, &source.length);
		source.filename = strcmp(cli.program_path, "-") == 0 ? "stdin" : cli.program_path;
		if (!text)
			return 1;
	}
	source.text = text;

	if (cli.command && !cli.list) {
		char *child_error = NULL;

		child_pid = child_spawn(cli.command, &release_fd, &child_error);
		if (child_pid < 0) {
			fprintf(stderr, "sonde: %s\n", child_error);
			free(child_error);
			free(text);
			return 1;
		}
	}

	memset(&compile_options, 0, sizeof(compile_options));
	compile_options.positional = cli.args;
	compile_options.positional_count = cli.arg_count;
	compile_options.named = cli.named;
	compile_options.named_count = cli.named_count;
	compile_options.named_used = cli.named_count ? xcalloc((size_t)cli.named_count, sizeof(bool)) : NULL;
	compile_options.target_pid = target_pid;
	compile_options.child_pid = child_pid;
	compile_options.own_pid = getpid();
	compile_options.unsafe = cli.unsafe;
	compile_options.max_strlen = max_strlen;
	compile_options.max_map_entries = max_map_entries;
	compile_options.stack_mode = stack_mode;
	compile_options.missing_probes = missing_probes;
	compile_options.helper_checks = cli.helper_checks;
	compile_options.stack_storage_size = stack_storage_size;
	compile_options.map_sizes = cli.map_sizes;
	compile_options.map_size_count = cli.map_size_count;
	compile_options.dump = cli.dump ? stderr : NULL;
	compile_options.macros = cli.macros;
	compile_options.macro_count = cli.macro_count;
	compile_options.join_printf = cli.tool;
	compile_options.drop_empty_probes = cli.tool;
	compile_options.hist_sums = cli.serve != NULL;
	compile_options.script_path = strcmp(source.filename, "stdin") != 0 && !cli.tool &&
				      !cli.program_text ? cli.program_path : NULL;

	memset(&program, 0, sizeof(program));
	diag_init(&diag, &source, stderr);
	if (compile_program(&source, &compile_options, &program, &diag) < 0) {
		child_abandon(child_pid, release_fd);
		goto done;
	}
	bool wants_help = false;
	for (int i = 0; i < cli.named_count; i++) {
		if (compile_options.named_used[i])
			continue;
		if (strcmp(cli.named[i], "help") == 0) {
			wants_help = true;
			continue;
		}
		struct strbuf known;
		strbuf_init(&known);
		for (int k = 0; k < program.options.count; k++)
			strbuf_printf(&known, "%s--%s", k ? ", " : "", program.options.items[k].name);
		fprintf(stderr, "sonde: unexpected program option '--%.*s': no getopt() in the program "
			"reads it (%s%s)\n", (int)strcspn(cli.named[i], "="), cli.named[i],
			known.length ? "it reads " : "it reads no named options",
			known.length ? known.data : "");
		strbuf_free(&known);
		child_abandon(child_pid, release_fd);
		goto done;
	}
	if (wants_help) {
		print_program_options(&program);
		child_abandon(child_pid, release_fd);
		status = 0;
		goto done;
	}
	if (cli.list) {
		list_program_probes(&program);
		status = 0;
		goto done;
	}

	memset(&runtime_options, 0, sizeof(runtime_options));
	runtime_options.output_path = cli.output_path;
	runtime_options.json = cli.json;
	runtime_options.quiet = cli.quiet;
	runtime_options.unsafe = cli.unsafe;
	runtime_options.dry_run = cli.dry_run;
	runtime_options.verbose = cli.verbose;
	runtime_options.child_pid = child_pid;
	runtime_options.child_release_fd = release_fd;
	runtime_options.target_pid = target_pid ? target_pid : cli.watch_pid;
	runtime_options.no_exit_maps = cli.tool;
	runtime_options.status_on_stderr = cli.tool;
	runtime_options.print_maps_on_exit = print_maps_on_exit;
	runtime_options.max_cat_bytes = max_cat_bytes;
	runtime_options.picture = cli.picture;
	runtime_options.serve = cli.serve;
	/* runtime_run releases (or abandons) and reaps the child itself. */
	status = runtime_run(&program, &runtime_options);
done:
	free(compile_options.named_used);
	compile_free(&program);
	type_free_all();
	btf_forget_types();
	free(text);
	fflush(stdout);
	return status;
}
