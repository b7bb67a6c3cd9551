/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `sonde flamegraph` and `sonde heatmap`: the command lines in front of the
 * renderers. Each reads its input whole (a file, or stdin), hands it to the
 * parser, draws, and writes the SVG to stdout. Errors are one sentence on
 * stderr naming the option or the input line, and exit status 1.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>   /* isfinite, a macro: no -lm */
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "flamegraph.h"
#include "folded.h"
#include "heatmap.h"

static const char flamegraph_usage[] =
	"usage: sonde flamegraph [options] [FILE]\n"
	"       sonde flamegraph --diff [options] BEFORE AFTER\n"
	"\n"
	"Draws a flame graph of the stacks in FILE (stdin when there is none) as an\n"
	"interactive SVG on stdout: hover names a frame, click zooms, Search (or\n"
	"Ctrl-F) highlights frames matching a regular expression. The input is\n"
	"folded stacks ('comm;outer;...;inner COUNT'), a bpftrace or sonde map of\n"
	"stacks (@[kstack, ustack, comm]: N), or perf script output.\n"
	"\n"
	"options:\n"
	"  --title TEXT      title (default \"Flame Graph\")\n"
	"  --subtitle TEXT   a second line under the title\n"
	"  --width N         width in pixels (default 1200)\n"
	"  --minwidth N      leave out frames narrower than N pixels (default 0.1)\n"
	"  --colors PALETTE  hot (default), mem, io, java, js, perl, red, green, blue,\n"
	"                    aqua, yellow, purple, orange\n"
	"  --countname NAME  what a sample is called (default \"samples\")\n"
	"  --reverse         reverse the stacks (leaves at the root) before merging\n"
	"  --inverted        icicle graph: the root at the top\n"
	"  --diff            differential graph of BEFORE and AFTER: widths from AFTER,\n"
	"                    red where a frame grew, blue where it shrank\n"
	"  --folded          write the merged folded stacks instead of the SVG (with\n"
	"                    --reverse: reversed); the picture's options do not apply\n"
	"  --max-input BYTES read at most BYTES of input (default 256M; K, M, G suffixes)\n"
	"  -h, --help        show this help\n"
	"\n"
	"Counts must add up to at most 2^63-1. Names that are not UTF-8 or hold\n"
	"control characters show those bytes as \\xNN.\n";

static const char heatmap_usage[] =
	"usage: sonde heatmap [options] [FILE]\n"
	"\n"
	"Draws a latency heat map from a JSON stream of histograms in FILE (stdin\n"
	"when there is none) as an SVG on stdout: one column per histogram\n"
	"printed (an interval), the buckets upwards, each cell coloured by its\n"
	"count. The stream is sonde's (or bpftrace's) -f json output of a program\n"
	"that prints a hist() or lhist() map each interval, or a histogram tool's\n"
	"--json output (runqlat --json 1 10).\n"
	"\n"
	"options:\n"
	"  --title TEXT       title (default \"Latency Heat Map\")\n"
	"  --width N          width in pixels (default 1200)\n"
	"  --max-input BYTES  read at most BYTES of input (default 256M; K, M, G suffixes)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Past 20,000 cells more than the buckets read, only the buckets printed\n"
	"are drawn, on white. Gaps between bucket ranges are filled with empty\n"
	"rows up to 4096 rows in all; past that, a gap is one row (the picture\n"
	"says so). A line (a record) holds at most 1048576 JSON values.\n";

enum command_option {
	OPT_TITLE = 256,
	OPT_SUBTITLE,
	OPT_WIDTH,
	OPT_MINWIDTH,
	OPT_COLORS,
	OPT_COUNTNAME,
	OPT_REVERSE,
	OPT_INVERTED,
	OPT_DIFF,
	OPT_FOLDED,
	OPT_MAX_INPUT,
};

/* What a renderer reads at most unless --max-input says otherwise: days
 * of histograms printed each second, or millions of folded stacks, yet an
 * endless /dev/zero stops here (in a second, at this much memory) instead
 * of at the end of memory. */
#define COMMAND_INPUT_DEFAULT (256ull << 20)

static int command_fail(const char *command, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int command_fail(const char *command, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sonde %s: ", command);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static bool command_number(const char *text, double *value)
{
	char *end;

	errno = 0;
	*value = strtod(text, &end);
	return *text && !*end && !errno && isfinite(*value);
}

/* --width: a whole number in [min, max]; 0 is no default in disguise. */
static int command_width(const char *command, const char *text, int min, int max, int *width)
{
	double number;

	if (!command_number(text, &number))
		return command_fail(command, "--width '%s' is not a whole number", text);
	if (number < min || number > max)
		return command_fail(command, "--width %s is out of range (%d to %d pixels)", text,
				    min, max);
	if (number != (int)number)
		return command_fail(command, "--width '%s' is not a whole number", text);
	*width = (int)number;
	return 0;
}

/* --max-input: bytes, with an optional K, M or G (powers of 1024). */
static int command_max_input(const char *command, const char *text, size_t *limit)
{
	unsigned long long bytes, scale = 1;
	char *end;

	errno = 0;
	bytes = strtoull(text, &end, 10);
	if (*end && !end[1] && strchr("kKmMgG", *end))
		scale = *end == 'k' || *end == 'K' ? 1ull << 10 : *end == 'm' || *end == 'M' ?
			1ull << 20 : 1ull << 30;
	else if (*end)
		end = NULL;
	if (!isdigit((unsigned char)*text) || !end || errno || bytes == 0 ||
	    bytes > SIZE_MAX / 2 / scale)
		return command_fail(command, "--max-input '%s' is not a size in bytes (e.g. 4096, "
				    "64M, 2G)", text);
	*limit = (size_t)(bytes * scale);
	return 0;
}

/* The option getopt could not take (option is ':' when its value is
 * missing), named as the user typed it. */
static int command_bad_option(const char *command, int option, int argc, char **argv)
{
	const char *typed = optind - 1 < argc && optind > 1 ? argv[optind - 1] : "?";

	if (option == ':')
		return command_fail(command, "%s needs a value", typed);
	return command_fail(command, "unknown option '%s' (sonde %s --help lists the options)",
			    typed, command);
}

static char *command_read(const char *command, const char *path, size_t limit, size_t *length)
{
	const char *name = path && strcmp(path, "-") != 0 ? path : NULL;
	char *text = NULL;
	int err = name ? read_path_bounded(name, limit, &text, length) :
		  read_fd_bounded(0, limit, &text, length);

	if (err == -EFBIG)
		command_fail(command, "%s is larger than %zu bytes (--max-input raises the limit)",
			     name ? name : "stdin", limit);
	else if (err)
		command_fail(command, "cannot read %s: %s", name ? name : "stdin", strerror(-err));
	return err ? NULL : text;
}

static int command_write(const char *command, const struct strbuf *out)
{
	if (fwrite(out->data ? out->data : "", 1, out->length, stdout) != out->length ||
	    fflush(stdout) != 0)
		return command_fail(command, "writing to stdout failed: %s", strerror(errno));
	return 0;
}

static int flamegraph_load(const char *path, size_t limit, struct folded_set *set)
{
	size_t length;
	char *text = command_read("flamegraph", path, limit, &length);
	char *error = NULL;
	int status;

	if (!text)
		return 1;
	status = folded_parse(set, text, length, &error);
	free(text);
	if (status) {
		command_fail("flamegraph", "%s: %s", path && strcmp(path, "-") ? path : "stdin", error);
		free(error);
		return 1;
	}
	return 0;
}

int flamegraph_command(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "subtitle", required_argument, NULL, OPT_SUBTITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "minwidth", required_argument, NULL, OPT_MINWIDTH },
		{ "colors", required_argument, NULL, OPT_COLORS },
		{ "countname", required_argument, NULL, OPT_COUNTNAME },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ "inverted", no_argument, NULL, OPT_INVERTED },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "max-input", required_argument, NULL, OPT_MAX_INPUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct flamegraph_options options = { 0 };
	struct folded_set set = { 0 }, before = { 0 };
	bool diff = false, folded = false;
	const char *picture_option = NULL;  /* one the picture takes, for --folded's error */
	size_t limit = COMMAND_INPUT_DEFAULT;
	struct strbuf out;
	char *error = NULL;
	int option, status, index;
	double number;

	opterr = 0;
	optind = 1;
	while ((option = getopt_long(argc, argv, ":h", long_options, &index)) != -1) {
		if (option == OPT_TITLE || option == OPT_SUBTITLE || option == OPT_COLORS ||
		    option == OPT_COUNTNAME || option == OPT_INVERTED || option == OPT_WIDTH ||
		    option == OPT_MINWIDTH)
			picture_option = long_options[index].name;
		switch (option) {
		case OPT_TITLE: options.title = optarg; break;
		case OPT_SUBTITLE: options.subtitle = optarg; break;
		case OPT_COLORS: options.colors = optarg; break;
		case OPT_COUNTNAME: options.count_name = optarg; break;
		case OPT_REVERSE: options.reverse = true; break;
		case OPT_INVERTED: options.inverted = true; break;
		case OPT_DIFF: diff = true; break;
		case OPT_FOLDED: folded = true; break;
		case OPT_WIDTH:
			if (command_width("flamegraph", optarg, FLAMEGRAPH_WIDTH_MIN,
					  FLAMEGRAPH_WIDTH_MAX, &options.width))
				return 1;
			break;
		case OPT_MINWIDTH:
			if (!command_number(optarg, &number))
				return command_fail("flamegraph", "--minwidth '%s' is not a number", optarg);
			options.min_width = number;
			options.min_width_set = true;
			break;
		case OPT_MAX_INPUT:
			if (command_max_input("flamegraph", optarg, &limit))
				return 1;
			break;
		case 'h':
			fputs(flamegraph_usage, stdout);
			return 0;
		default:
			return command_bad_option("flamegraph", option, argc, argv);
		}
	}
	if (folded && diff)
		return command_fail("flamegraph", "--folded cannot write a differential profile "
				    "(--diff): write each profile with --folded");
	if (folded && picture_option)
		return command_fail("flamegraph", "--folded writes stacks, not a picture: --%s does "
				    "not apply", picture_option);
	if (!folded && flamegraph_check_options(&options, &error)) {
		command_fail("flamegraph", "%s", error);
		free(error);
		return 1;
	}
	if (diff && argc - optind != 2)
		return command_fail("flamegraph", "--diff takes two files, BEFORE and AFTER");
	if (!diff && argc - optind > 1)
		return command_fail("flamegraph", "one input file at most, got %d", argc - optind);
	if (diff ? flamegraph_load(argv[optind], limit, &before) ||
		   flamegraph_load(argv[optind + 1], limit, &set) :
	    flamegraph_load(optind < argc ? argv[optind] : NULL, limit, &set)) {
		folded_free(&set);
		folded_free(&before);
		return 1;
	}
	strbuf_init(&out);
	status = 0;
	if (folded)
		flamegraph_write_folded(&set, options.reverse, &out);
	else
		status = flamegraph_svg(&set, diff ? &before : NULL, &options, &out, &error);
	if (status)
		status = command_fail("flamegraph", "%s", error);
	else
		status = command_write("flamegraph", &out);
	free(error);
	strbuf_free(&out);
	folded_free(&set);
	folded_free(&before);
	return status;
}

int heatmap_command(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "max-input", required_argument, NULL, OPT_MAX_INPUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct heatmap_options options = { 0 };
	size_t limit = COMMAND_INPUT_DEFAULT;
	struct heatmap map = { 0 };
	const char *path;
	struct strbuf out;
	char *text, *error = NULL;
	int option, status;
	size_t length;

	opterr = 0;
	optind = 1;
	while ((option = getopt_long(argc, argv, ":h", long_options, NULL)) != -1) {
		switch (option) {
		case OPT_TITLE: options.title = optarg; break;
		case OPT_WIDTH:
			if (command_width("heatmap", optarg, HEATMAP_WIDTH_MIN, HEATMAP_WIDTH_MAX,
					  &options.width))
				return 1;
			break;
		case OPT_MAX_INPUT:
			if (command_max_input("heatmap", optarg, &limit))
				return 1;
			break;
		case 'h':
			fputs(heatmap_usage, stdout);
			return 0;
		default:
			return command_bad_option("heatmap", option, argc, argv);
		}
	}
	if (argc - optind > 1)
		return command_fail("heatmap", "one input file at most, got %d", argc - optind);
	path = optind < argc ? argv[optind] : NULL;
	text = command_read("heatmap", path, limit, &length);
	if (!text)
		return 1;
	strbuf_init(&out);
	status = heatmap_parse_json(&map, text, length, &error);
	if (status) {
		command_fail("heatmap", "%s: %s", path && strcmp(path, "-") ? path : "stdin", error);
	} else if ((status = heatmap_svg(&map, &options, &out, &error))) {
		command_fail("heatmap", "%s", error);
	} else {
		status = command_write("heatmap", &out);
	}
	free(text);
	free(error);
	strbuf_free(&out);
	heatmap_free(&map);
	return status ? 1 : 0;
}
