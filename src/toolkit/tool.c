/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tools: their headers, their command lines and their event sources.
 *
 * The header is data, not code: `//! key: value` lines at the top of the
 * tool file (tools/README.md). The same record drives the option parser,
 * --help and the man page, so they cannot disagree.
 *
 * Option values become predefined macros (preprocess.h). An option that was
 * not given keeps its default, and the compiler folds the conditions that
 * test it; see fold_condition in sema.c.
 */
#include "tool.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/names.h"
#include "../kernel/btf.h"
#include "../kernel/cgroup.h"
#include "../kernel/kallsyms.h"
#include "../kernel/pinned.h"
#include "../probes/provider.h"
#include "generator.h"

const struct tool *tool_find(const char *name)
{
	for (const struct tool *tool = tool_table; tool->name; tool++)
		if (strcmp(tool->name, name) == 0)
			return tool;
	return NULL;
}

/* ---- the header ---- */

static char *trimmed(const char *start, const char *end)
{
	while (start < end && isspace((unsigned char)*start))
		start++;
	while (end > start && isspace((unsigned char)end[-1]))
		end--;
	return xstrndup(start, (size_t)(end - start));
}

/* Splits "a | b | c" into at most `max` trimmed parts; returns the count. */
static int split_bars(const char *text, char **parts, int max)
{
	int count = 0;
	const char *start = text;
	for (;;) {
		const char *bar = strchr(start, '|');
		if (!bar || count == max - 1) {
			parts[count++] = trimmed(start, start + strlen(start));
			return count;
		}
		parts[count++] = trimmed(start, bar);
		start = bar + 1;
	}
}

static const struct {
	const char *name;
	enum tool_value_kind kind;
} value_kinds[] = {
	{ "flag", TOOL_VALUE_FLAG },
	{ "int", TOOL_VALUE_INT },
	{ "errno", TOOL_VALUE_ERRNO },
	{ "pid", TOOL_VALUE_PID },
	{ "string", TOOL_VALUE_STRING },
	{ "disk", TOOL_VALUE_DISK },
	{ "file", TOOL_VALUE_FILE },
	{ "list", TOOL_VALUE_LIST },
	{ "pids", TOOL_VALUE_PIDS },
	{ "choice", TOOL_VALUE_CHOICE },
	{ "cgroup", TOOL_VALUE_CGROUP },
	{ "pinned", TOOL_VALUE_PINNED },
	{ "specs", TOOL_VALUE_SPECS },
};

/* "MACRO kind [default]" */
static int parse_macro_part(const char *text, struct tool_option *option, char **error)
{
	char name[64], kind[16];
	int used = 0;
	if (sscanf(text, "%63s %15s %n", name, kind, &used) < 2) {
		*error = xasprintf("'%s' should be 'MACRO kind [default]'", text);
		return -EINVAL;
	}
	option->macro = xstrdup(name);
	size_t i;
	for (i = 0; i < sizeof(value_kinds) / sizeof(value_kinds[0]); i++)
		if (strcmp(value_kinds[i].name, kind) == 0)
			break;
	if (i == sizeof(value_kinds) / sizeof(value_kinds[0])) {
		*error = xasprintf("unknown option kind '%s' (flag, int, errno, pid, string, disk,"
				   " file, list, pids, choice, cgroup, pinned or specs)", kind);
		return -EINVAL;
	}
	option->kind = value_kinds[i].kind;
	if (option->kind == TOOL_VALUE_CHOICE) {
		/* "MACRO choice a,b,c [default]" */
		char choices[256];
		int more = 0;
		if (sscanf(text + used, "%255s %n", choices, &more) < 1) {
			*error = xasprintf("'%s': a choice lists its values, 'MACRO choice a,b,c'", text);
			return -EINVAL;
		}
		option->choices = xstrdup(choices);
		used += more;
	}
	if ((option->kind == TOOL_VALUE_INT || option->kind == TOOL_VALUE_LIST ||
	     option->kind == TOOL_VALUE_PIDS) &&
	    strstr(text + used, "..")) {
		/* "MACRO int LO..HI [default]"; "LO.." has no upper bound */
		const char *at = text + used;
		char *end;
		option->range_low = strtoll(at, &end, 10);
		option->range_high = LLONG_MAX;
		bool ok = end != at && strncmp(end, "..", 2) == 0;
		at = end + 2;
		if (ok && *at && !isspace((unsigned char)*at)) {
			option->range_high = strtoll(at, &end, 10);
			ok = end != at;
			at = end;
		}
		if (!ok || (*at && !isspace((unsigned char)*at)) ||
		    option->range_low > option->range_high) {
			*error = xasprintf("'%s': a range is 'MACRO %s LO..HI' or 'MACRO %s LO..'", text,
					   kind, kind);
			return -EINVAL;
		}
		while (isspace((unsigned char)*at))
			at++;
		option->has_range = true;
		used = (int)(at - text);
	}
	if (text[used])
		option->default_text = trimmed(text + used, text + strlen(text));
	return 0;
}

/* option: -x --long ARG | MACRO kind [default] | help */
static int parse_option_line(const char *text, bool positional, struct tool_header *header,
			     char **error)
{
	char *parts[3];
	struct tool_option option = { 0 };
	int count = split_bars(text, parts, 3);
	int status = 0;
	if (count != 3) {
		*error = xasprintf("'%s' should be 'spelling | MACRO kind [default] | help'", text);
		status = -EINVAL;
		goto out;
	}
	if (positional) {
		option.is_positional = true;
		option.argument = xstrdup(parts[0]);
	} else {
		char *save = NULL, *copy = xstrdup(parts[0]);
		for (char *word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
			if (word[0] == '-' && word[1] == '-' && word[2])
				option.long_name = xstrdup(word + 2);
			else if (word[0] == '-' && word[1] && !word[2])
				option.short_name = word[1];
			else
				option.argument = xstrdup(word);
		}
		free(copy);
		if (!option.short_name && !option.long_name) {
			*error = xasprintf("option '%s' has neither a short nor a long name", parts[0]);
			status = -EINVAL;
		}
	}
	if (status == 0)
		status = parse_macro_part(parts[1], &option, error);
	if (status == 0 && (option.kind == TOOL_VALUE_FLAG) != !option.argument) {
		*error = xasprintf("option '%s': a flag takes no argument, other kinds need one", parts[0]);
		status = -EINVAL;
	}
	option.help = xstrdup(parts[2]);
	if (status == 0) {
		vec_push(&header->options, option);
		memset(&option, 0, sizeof(option));
	}
out:
	free(option.long_name);
	free(option.argument);
	free(option.macro);
	free(option.default_text);
	free(option.choices);
	free(option.help);
	for (int i = 0; i < count; i++)
		free(parts[i]);
	return status;
}

/* source: [MACRO=]probe | [MACRO=]probe ... */
static void parse_source_line(const char *text, struct tool_header *header)
{
	char *parts[8];
	struct tool_source source = { 0 };
	if (strncmp(text, "when ", 5) == 0 && strchr(text, ':')) {
		const char *colon = strchr(text, ':');
		source.condition = trimmed(text + 5, colon);
		text = colon + 1;
	}
	int count = split_bars(text, parts, 8);
	for (int i = 0; i < count; i++) {
		struct tool_source_choice choice = { 0 };
		char *equals = strchr(parts[i], '=');
		char *colon = strchr(parts[i], ':');
		if (equals && (!colon || equals < colon)) {
			choice.macro = trimmed(parts[i], equals);
			choice.probe = trimmed(equals + 1, equals + strlen(equals));
		} else {
			choice.probe = xstrdup(parts[i]);
		}
		vec_push(&source.choices, choice);
		free(parts[i]);
	}
	vec_push(&header->sources, source);
}

static void parse_note_line(const char *text, void *notes_vec)
{
	VEC(struct tool_note) *notes = notes_vec;
	char *parts[2];
	int count = split_bars(text, parts, 2);
	struct tool_note note = { parts[0], count > 1 ? parts[1] : xstrdup("") };
	vec_push(notes, note);
}

static void append_text(char **to, const char *line)
{
	char *joined;
	if (!*to) {
		*to = xstrdup(line);
		return;
	}
	/* an empty `//! about:` line separates paragraphs */
	joined = xasprintf("%s%s%s", *to, !*line ? "\n" : (*to)[strlen(*to) - 1] == '\n' ? "" : " ", line);
	free(*to);
	*to = joined;
}

/* `flamegraph | TITLE | COUNT NAME` or `heatmap | TITLE`: the picture, and
 * the option that asks for it. */
static int parse_picture_line(const char *value, struct tool_header *out)
{
	char *parts[3] = { 0 };
	const char *p = value;
	for (int i = 0; i < 3 && p; i++) {
		const char *bar = strchr(p, '|');
		const char *end = bar ? bar : p + strlen(p);
		parts[i] = trimmed(p, end);
		p = bar ? bar + 1 : NULL;
	}
	bool flamegraph = parts[0] && strcmp(parts[0], "flamegraph") == 0;
	bool heatmap = parts[0] && strcmp(parts[0], "heatmap") == 0;
	if ((!flamegraph && !heatmap) || !parts[1] || out->picture_kind) {
		for (int i = 0; i < 3; i++)
			free(parts[i]);
		return -EINVAL;
	}
	out->picture_kind = parts[0];
	out->picture_title = parts[1];
	out->picture_count_name = parts[2];
	struct tool_option option = {
		.long_name = xstrdup(flamegraph ? "svg" : "heatmap"),
		.argument = xstrdup("FILE"),
		.macro = xstrdup("PICTURE_FILE"),
		.kind = TOOL_VALUE_STRING,
		.help = xstrdup(flamegraph ? "Write a flame graph of the stacks to FILE (SVG)"
					   : "Write a latency heat map of each interval's histogram "
					     "to FILE (SVG)"),
	};
	/* among the options, before the positional arguments (--help lists them so) */
	vec_push(&out->options, option);
	int at = out->options.count - 1;
	while (at > 0 && out->options.items[at - 1].is_positional) {
		out->options.items[at] = out->options.items[at - 1];
		at--;
	}
	out->options.items[at] = option;
	return 0;
}

/* `@map | MACRO` or `stack-map | MACRO` */
static int parse_size_line(const char *value, struct tool_header *out)
{
	char *parts[2];
	int count = split_bars(value, parts, 2);
	struct tool_size size = { parts[0], count > 1 ? parts[1] : NULL };
	if (count < 2 || (size.map[0] != '@' && strcmp(size.map, "stack-map") != 0)) {
		free(size.map);
		free(size.macro);
		return -EINVAL;
	}
	vec_push(&out->sizes, size);
	return 0;
}

/* Each size names an int option of the header (any order of lines). */
static int check_sizes(const char *name, const struct tool_header *header, char **error)
{
	for (int i = 0; i < header->sizes.count; i++) {
		const struct tool_option *option = NULL;
		for (int j = 0; j < header->options.count; j++)
			if (strcmp(header->options.items[j].macro, header->sizes.items[i].macro) == 0)
				option = &header->options.items[j];
		if (!option || option->kind != TOOL_VALUE_INT) {
			*error = xasprintf("tools/%s.bt: size of %s: %s is not an int option", name,
					   header->sizes.items[i].map, header->sizes.items[i].macro);
			return -EINVAL;
		}
	}
	return 0;
}

static void free_notes(struct tool_note *notes, int count);

/* Whether the alias's arguments give this option (by either spelling). */
static bool alias_gives(const char *alias_args, const struct tool_option *option)
{
	char *copy = xstrdup(alias_args), *save = NULL;
	bool gives = false;
	for (char *word = strtok_r(copy, " \t", &save); word && !gives;
	     word = strtok_r(NULL, " \t", &save)) {
		if (word[0] != '-')
			continue;
		if (word[1] == '-')
			gives = option->long_name && strncmp(word + 2, option->long_name,
							     strlen(option->long_name)) == 0 &&
				(!word[2 + strlen(option->long_name)] ||
				 word[2 + strlen(option->long_name)] == '=');
		else
			gives = option->short_name && word[1] == option->short_name;
	}
	free(copy);
	return gives;
}

/* An alias's header: its target's, under the alias's name, with the
 * alias's own summary and examples where it has them. The options its
 * arguments give are fixed: --help and the man page leave them out. */
static int alias_header(const char *name, struct tool_header *out, char **error)
{
	const struct tool *target = tool_find(out->alias_of);
	struct tool_header base;
	if (!target) {
		*error = xasprintf("tools/%s.bt: alias of '%s', which is no tool", name, out->alias_of);
		return -EINVAL;
	}
	char *detail = NULL;
	int status = tool_header_parse(target->name, target->text, &base, &detail);
	if (status == 0 && base.alias_of) {
		detail = xasprintf("it is an alias itself");
		status = -EINVAL;
	}
	if (status < 0) {
		*error = xasprintf("tools/%s.bt: alias of %s: %s", name, out->alias_of, detail);
		free(detail);
		tool_header_free(&base);
		return status;
	}
	free(base.name);
	base.name = out->name;
	out->name = NULL;
	if (out->summary) {
		free(base.summary);
		base.summary = out->summary;
		out->summary = NULL;
	}
	if (out->examples.count) {
		free_notes(base.examples.items, base.examples.count);
		base.examples = out->examples;
		memset(&out->examples, 0, sizeof(out->examples));
	}
	char *about = xasprintf("%s%ssonde %s is sonde %s %s.", base.about ? base.about : "",
				base.about ? "\n" : "", base.name, out->alias_of, out->alias_args);
	free(base.about);
	base.about = about;
	for (int i = 0; i < base.options.count; i++)
		base.options.items[i].is_fixed = alias_gives(out->alias_args, &base.options.items[i]);
	base.alias_of = out->alias_of;
	base.alias_args = out->alias_args;
	out->alias_of = out->alias_args = NULL;
	tool_header_free(out);
	*out = base;
	return 0;
}

int tool_header_parse(const char *name, const char *text, struct tool_header *out, char **error)
{
	memset(out, 0, sizeof(*out));
	out->name = xstrdup(name);
	const char *p = text;
	int line_number = 0;
	while (*p) {
		const char *end = strchr(p, '\n');
		if (!end)
			end = p + strlen(p);
		line_number++;
		if (strncmp(p, "//!", 3) == 0) {
			char *line = trimmed(p + 3, end);
			char *colon = strchr(line, ':');
			int status = 0;
			if (!colon) {
				*error = xasprintf("tools/%s.bt:%d: a header line is 'key: value'", name,
						   line_number);
				free(line);
				return -EINVAL;
			}
			*colon = '\0';
			char *value = trimmed(colon + 1, colon + 1 + strlen(colon + 1));
			if (strcmp(line, "summary") == 0) {
				free(out->summary);
				out->summary = xstrdup(value);
			} else if (strcmp(line, "about") == 0) {
				append_text(&out->about, value);
			} else if (strcmp(line, "option") == 0 || strcmp(line, "arg") == 0) {
				char *detail = NULL;
				status = parse_option_line(value, line[0] == 'a', out, &detail);
				if (status < 0) {
					*error = xasprintf("tools/%s.bt:%d: %s", name, line_number, detail);
					free(detail);
				}
			} else if (strcmp(line, "source") == 0) {
				parse_source_line(value, out);
			} else if (strcmp(line, "example") == 0) {
				parse_note_line(value, &out->examples);
			} else if (strcmp(line, "field") == 0) {
				parse_note_line(value, &out->fields);
			} else if (strcmp(line, "requires") == 0) {
				parse_note_line(value, &out->requirements);
			} else if (strcmp(line, "strlen") == 0) {
				out->max_strlen = atoi(value);
				if (out->max_strlen < 1 || out->max_strlen > 1024) {
					*error = xasprintf("tools/%s.bt:%d: strlen must be from 1 to 1024",
							   name, line_number);
					status = -EINVAL;
				}
			} else if (strcmp(line, "size") == 0) {
				status = parse_size_line(value, out);
				if (status < 0)
					*error = xasprintf("tools/%s.bt:%d: a size is '@MAP | MACRO' or "
							   "'stack-map | MACRO'", name, line_number);
			} else if (strcmp(line, "overhead") == 0) {
				append_text(&out->overhead, value);
			} else if (strcmp(line, "alias") == 0) {
				size_t length = strcspn(value, " \t");
				free(out->alias_of);
				free(out->alias_args);
				out->alias_of = xstrndup(value, length);
				out->alias_args = trimmed(value + length, value + strlen(value));
			} else if (strcmp(line, "picture") == 0) {
				status = parse_picture_line(value, out);
				if (status < 0)
					*error = xasprintf("tools/%s.bt:%d: a picture is 'flamegraph | "
							   "TITLE | COUNT NAME' or 'heatmap | TITLE'",
							   name, line_number);
			} else {
				*error = xasprintf("tools/%s.bt:%d: unknown header key '%s'", name,
						   line_number, line);
				status = -EINVAL;
			}
			free(value);
			free(line);
			if (status < 0)
				return status;
		}
		p = *end ? end + 1 : end;
	}
	if (out->alias_of)
		return alias_header(name, out, error);
	if (!out->summary) {
		*error = xasprintf("tools/%s.bt: the header has no 'summary:' line", name);
		return -EINVAL;
	}
	return check_sizes(name, out, error);
}

static void free_notes(struct tool_note *notes, int count)
{
	for (int i = 0; i < count; i++) {
		free(notes[i].text);
		free(notes[i].explanation);
	}
	free(notes);
}

void tool_header_free(struct tool_header *header)
{
	for (int i = 0; i < header->options.count; i++) {
		struct tool_option *option = &header->options.items[i];
		free(option->long_name);
		free(option->argument);
		free(option->macro);
		free(option->default_text);
		free(option->choices);
		free(option->help);
	}
	free(header->options.items);
	for (int i = 0; i < header->sources.count; i++) {
		struct tool_source *source = &header->sources.items[i];
		for (int j = 0; j < source->choices.count; j++) {
			free(source->choices.items[j].macro);
			free(source->choices.items[j].probe);
		}
		free(source->choices.items);
		free(source->condition);
	}
	free(header->sources.items);
	free_notes(header->examples.items, header->examples.count);
	free_notes(header->fields.items, header->fields.count);
	free_notes(header->requirements.items, header->requirements.count);
	for (int i = 0; i < header->sizes.count; i++) {
		free(header->sizes.items[i].map);
		free(header->sizes.items[i].macro);
	}
	free(header->sizes.items);
	free(header->name);
	free(header->summary);
	free(header->about);
	free(header->overhead);
	free(header->picture_kind);
	free(header->picture_title);
	free(header->picture_count_name);
	free(header->alias_of);
	free(header->alias_args);
	memset(header, 0, sizeof(*header));
}

/* ---- option values ---- */

/* "-p/--pid", "-x", "--max-args" or "interval": how errors name an option. */
static char *option_spelling(const struct tool_option *option)
{
	if (option->is_positional)
		return xasprintf("the %s argument", option->argument);
	if (option->short_name && option->long_name)
		return xasprintf("-%c/--%s", option->short_name, option->long_name);
	if (option->short_name)
		return xasprintf("-%c", option->short_name);
	return xasprintf("--%s", option->long_name);
}

static bool parse_whole_number(const char *text, long long *value)
{
	char *end;
	errno = 0;
	*value = strtoll(text, &end, 10);
	return !errno && end != text && !*end;
}

/* A value given for an option with a range must lie in it (a default may
 * lie outside: 0 or -1 standing for "not given"). NULL, or the sentence. */
static char *range_error(const struct tool_option *option, long long number)
{
	if (!option->has_range || (number >= option->range_low && number <= option->range_high))
		return NULL;
	char *spelling = option_spelling(option);
	char *error = option->range_high == LLONG_MAX
		? xasprintf("%s must be %lld or more, not %lld", spelling, option->range_low, number)
		: xasprintf("%s must be from %lld to %lld, not %lld", spelling, option->range_low,
			    option->range_high, number);
	free(spelling);
	return error;
}

/* "(x == 80 || x == 443)" for "80,443"; NULL after setting *error. */
static char *list_body(const struct tool_option *option, const char *text, const char *spelling,
		       char **error)
{
	struct strbuf body;
	char *copy = xstrdup(text), *save = NULL;
	int count = 0;
	strbuf_init(&body);
	strbuf_putc(&body, '(');
	for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		long long value;
		if (!parse_whole_number(item, &value) || value < 0) {
			*error = xasprintf("%s needs a comma-separated list of whole numbers, not '%s'",
					   spelling, text);
			strbuf_free(&body);
			free(copy);
			return NULL;
		}
		*error = range_error(option, value);
		/* a process that is not there would be traced silently never */
		if (!*error && option->kind == TOOL_VALUE_PIDS && kill((pid_t)value, 0) != 0 &&
		    errno == ESRCH)
			*error = xasprintf("%s: there is no process or thread with id %lld", spelling,
					   value);
		if (*error) {
			strbuf_free(&body);
			free(copy);
			return NULL;
		}
		strbuf_printf(&body, "%sx == %lld", count++ ? " || " : "", value);
	}
	free(copy);
	if (count == 0) {
		*error = xasprintf("%s needs a comma-separated list of whole numbers", spelling);
		strbuf_free(&body);
		return NULL;
	}
	strbuf_putc(&body, ')');
	return strbuf_release(&body);
}

/* Whether name is a block device or partition the kernel knows. */
static bool disk_exists(const char *name)
{
	if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return false;
	char *path = xasprintf("/sys/class/block/%s", name);
	bool exists = access(path, F_OK) == 0;
	free(path);
	return exists;
}

static void add_macro(struct tool_run *run, const char *name, const char *parameter, char *body)
{
	struct predefined_macro macro = { xstrdup(name), parameter ? xstrdup(parameter) : NULL, body };
	vec_push(&run->macros, macro);
}

/* Turns one option's value (text, or NULL when not given) into its macro. */
static int define_option(struct tool_run *run, const struct tool_option *option, const char *text,
			 char **error)
{
	char *spelling = option_spelling(option);
	long long number;
	int status = 0;
	bool given = text != NULL;
	if (!text)
		text = option->default_text;
	switch (option->kind) {
	case TOOL_VALUE_SPECS:
		break;  /* read by the generator from run->values */
	case TOOL_VALUE_FLAG:
		add_macro(run, option->macro, NULL, xstrdup(given ? "1" : "0"));
		break;
	case TOOL_VALUE_INT:
	case TOOL_VALUE_PID:
		if (!text)
			break;
		if (!parse_whole_number(text, &number) ||
		    (option->kind == TOOL_VALUE_PID && given && (number <= 0 || number > 0x3fffffff))) {
			*error = xasprintf("%s needs %s, not '%s'", spelling,
					   option->kind == TOOL_VALUE_PID ? "a process id" : "a whole number",
					   text);
			status = -EINVAL;
			break;
		}
		if (given && (*error = range_error(option, number))) {
			status = -EINVAL;
			break;
		}
		if (option->kind == TOOL_VALUE_PID && given) {
			if (kill((pid_t)number, 0) != 0 && errno == ESRCH) {
				*error = xasprintf("%s: there is no process with pid %lld", spelling, number);
				status = -EINVAL;
				break;
			}
			run->watch_pid = (pid_t)number;
		}
		add_macro(run, option->macro, NULL, xasprintf("%lld", number));
		break;
	case TOOL_VALUE_ERRNO:
		if (!text)
			break;
		number = errno_number_of(text);
		if (number < 0 && (!parse_whole_number(text, &number) || number < 0 || number >= 4096)) {
			*error = xasprintf("%s needs an error name (ENOENT) or number, not '%s'", spelling,
					   text);
			status = -EINVAL;
			break;
		}
		add_macro(run, option->macro, NULL, xasprintf("%lld", number));
		break;
	case TOOL_VALUE_DISK:
	case TOOL_VALUE_STRING:
		if (!text)
			break;
		/* a disk that is not there would print empty histograms */
		if (option->kind == TOOL_VALUE_DISK && given && !disk_exists(text)) {
			*error = xasprintf("%s: there is no disk or partition named '%s' "
					   "(/sys/class/block lists them)", spelling, text);
			status = -EINVAL;
			break;
		}
		/* the default is written as a literal in the header */
		add_macro(run, option->macro, NULL,
			  given ? generator_quote(text) : xstrdup(text));
		break;
	case TOOL_VALUE_FILE: {
		if (!text)
			break;
		struct stat info;
		if (given && strpbrk(text, "\"\\\n")) {
			*error = xasprintf("%s: a path with a '\"', a '\\' or a line break cannot name "
					   "a probe's file, not '%s'", spelling, text);
			status = -EINVAL;
		} else if (given && stat(text, &info) != 0) {
			*error = xasprintf("%s: cannot use '%s': %s", spelling, text, strerror(errno));
			status = -EINVAL;
		} else if (given && !S_ISREG(info.st_mode)) {
			*error = xasprintf("%s: '%s' is not a regular file", spelling, text);
			status = -EINVAL;
		} else {
			add_macro(run, option->macro, NULL, given ? generator_quote(text) : xstrdup(text));
		}
		break;
	}
	case TOOL_VALUE_CHOICE: {
		if (!text)
			break;
		size_t length = strlen(text);
		const char *at = option->choices;
		bool listed = false;
		while (!listed && at && *at) {
			size_t item = strcspn(at, ",");
			listed = item == length && strncmp(at, text, length) == 0;
			at += item + (at[item] == ',');
		}
		if (!listed || strchr(text, ',')) {
			char *choices = xstrdup(option->choices);
			for (char *c = choices; *c; c++)
				if (*c == ',')
					*c = '|';
			*error = xasprintf("%s must be one of %s, not '%s'", spelling, choices, text);
			free(choices);
			status = -EINVAL;
			break;
		}
		add_macro(run, option->macro, NULL, generator_quote(text));
		char *flag = xasprintf("%s_%s", option->macro, text);
		add_macro(run, flag, NULL, xstrdup("1"));
		free(flag);
		break;
	}
	case TOOL_VALUE_CGROUP: {
		uint64_t id = 0;
		int found = given ? cgroup_id_of_path(text, &id) : 0;
		if (found < 0) {
			*error = xasprintf("%s: '%s' is not a cgroup v2 directory (%s)", spelling, text,
					   found == -EMEDIUMTYPE ? "not on a cgroup2 file system"
								 : strerror(-found));
			status = -EINVAL;
			break;
		}
		add_macro(run, option->macro, NULL, xasprintf("%llu", (unsigned long long)id));
		break;
	}
	case TOOL_VALUE_PINNED: {
		char *why = NULL;
		int fd = given ? pinned_map_open(text, 8, &why) : 0;
		if (fd < 0) {
			*error = xasprintf("%s: %s", spelling, why);
			free(why);
			status = -EINVAL;
			break;
		}
		if (given) {
			close(fd);
			char *path = generator_quote(text);
			add_macro(run, option->macro, "x", xasprintf("pinned_has_key(%s, x)", path));
			free(path);
		} else {
			add_macro(run, option->macro, "x", xstrdup("(1)"));
		}
		break;
	}
	case TOOL_VALUE_LIST:
	case TOOL_VALUE_PIDS: {
		char *body = given ? list_body(option, text, spelling, error) : xstrdup("(1)");
		if (!body) {
			status = -EINVAL;
			break;
		}
		add_macro(run, option->macro, "x", body);
		break;
	}
	}
	free(spelling);
	return status;
}

/* The header's sizes, from their options' values (given, else default; an
 * option without either leaves its maps at sonde's sizes). */
static int resolve_sizes(struct tool_run *run, char **values, char **error)
{
	const struct tool_header *header = &run->header;
	for (int i = 0; i < header->sizes.count; i++) {
		const struct tool_size *size = &header->sizes.items[i];
		for (int j = 0; j < header->options.count; j++) {
			const struct tool_option *option = &header->options.items[j];
			const char *text = values[j] ? values[j] : option->default_text;
			long long entries;
			if (strcmp(option->macro, size->macro) != 0 || !text)
				continue;
			char *spelling = option_spelling(option);
			/* define_option has refused what is not a number */
			if (!parse_whole_number(text, &entries) || entries < 1 ||
			    entries > MAP_ENTRIES_LIMIT) {
				*error = xasprintf("%s must be a number from 1 to %u, not '%s'", spelling,
						   MAP_ENTRIES_LIMIT, text);
				free(spelling);
				return -EINVAL;
			}
			struct map_size resolved = { xstrdup(size->map), (uint32_t)entries, spelling };
			vec_push(&run->map_sizes, resolved);
		}
	}
	return 0;
}

/* ---- event sources ---- */

/* "btf:STRUCT.FIELD": whether the kernel's struct STRUCT has FIELD (for
 * fields renamed between kernel versions, chosen by BTF, not by version). */
static bool btf_field_available(const char *what, char **why)
{
	const char *dot = strchr(what, '.');
	if (!dot) {
		*why = xasprintf("'btf:%s' should name STRUCT.FIELD", what);
		return false;
	}
	char *struct_name = xasprintf("struct %.*s", (int)(dot - what), what);
	struct type *record = btf_available() ? btf_type_by_name(struct_name) : NULL;
	bool found = false;
	if (record && record->kind == TYPE_RECORD) {
		if (record->is_incomplete)
			btf_complete_record(record);
		for (int i = 0; i < record->field_count && !found; i++)
			found = record->fields[i].name && strcmp(record->fields[i].name, dot + 1) == 0;
	}
	if (!found)
		*why = xasprintf("this kernel's %s has no field %s", struct_name, dot + 1);
	free(struct_name);
	return found;
}

/* "ksym:NAME": whether /proc/kallsyms names the kernel symbol NAME (a data
 * symbol is listed only on kernels built with CONFIG_KALLSYMS_ALL). */
static bool ksym_available(const char *name, char **why)
{
	unsigned long long address = 0;
	int found = kallsyms_lookup(name, &address);
	if (found == 0 && address != 0)
		return true;
	*why = found == -EACCES || (found == 0 && address == 0)
		       ? xasprintf("/proc/kallsyms hides the address of %s", name)
		       : xasprintf("this kernel's /proc/kallsyms has no symbol %s (data symbols "
				   "need CONFIG_KALLSYMS_ALL)", name);
	return false;
}

/* Whether the running kernel can attach probe; *why says why not. */
static bool probe_available(const char *probe, char **why)
{
	if (strncmp(probe, "btf:", 4) == 0)
		return btf_field_available(probe + 4, why);
	if (strncmp(probe, "ksym:", 5) == 0)
		return ksym_available(probe + 5, why);
	struct src_loc loc = { 0 };
	struct probe_spec *spec = probe_spec_parse(probe, loc);
	const struct provider *provider = spec ? provider_lookup(spec->provider_name) : NULL;
	probe_point_list points = { 0 };
	bool available = false;
	if (!provider) {
		*why = xasprintf("'%s' names no probe type sonde knows", probe);
	} else if (provider->expand(spec, &points, why) == 0) {
		const struct probe_point *missing = probe_points_first_unavailable(&points);
		available = points.count > 0 && !missing;
		if (missing)
			*why = xstrdup(missing->unavailable);
		else if (!available)
			*why = xasprintf("%s matches nothing on this kernel", probe);
	}
	for (int i = 0; i < points.count; i++)
		probe_point_free(points.items[i]);
	free(points.items);
	if (spec)
		probe_spec_free(spec);
	return available;
}

/* Whether a macro is defined to something other than 0 (a flag given). */
static bool macro_is_set(const struct tool_run *run, const char *name)
{
	for (int i = 0; i < run->macros.count; i++)
		if (strcmp(run->macros.items[i].name, name) == 0)
			return strcmp(run->macros.items[i].body, "0") != 0;
	return false;
}

/* "-l/--lossprobe" for the option of a source's condition. */
static char *condition_spelling(const struct tool_header *header, const char *macro)
{
	for (int i = 0; i < header->options.count; i++)
		if (strcmp(header->options.items[i].macro, macro) == 0)
			return option_spelling(&header->options.items[i]);
	return xstrdup(macro);
}

static int choose_sources(struct tool_run *run, struct strbuf *notes, char **error)
{
	/* a kernel interface outside the probes, such as cpufreq's sysfs files */
	for (int i = 0; i < run->header.requirements.count; i++) {
		const struct tool_note *need = &run->header.requirements.items[i];
		if (access(need->text, F_OK) != 0) {
			*error = xstrdup(need->explanation);
			return -ENOENT;
		}
	}
	for (int i = 0; i < run->header.sources.count; i++) {
		const struct tool_source *source = &run->header.sources.items[i];
		struct strbuf reasons;
		const struct tool_source_choice *chosen = NULL;
		char *probe = NULL;
		if (source->condition && !macro_is_set(run, source->condition))
			continue;
		strbuf_init(&reasons);
		for (int j = 0; j < source->choices.count && !chosen; j++) {
			char *why = NULL;
			/* with the options' values: `uprobe:SHARED:readline` */
			free(probe);
			probe = preprocess_substitute(source->choices.items[j].probe, run->macros.items,
						      run->macros.count);
			if (probe_available(probe, &why))
				chosen = &source->choices.items[j];
			else
				strbuf_printf(&reasons, "%s%s", reasons.length ? "; " : "", why ? why : "");
			free(why);
		}
		if (!chosen && source->condition) {
			char *spelling = condition_spelling(&run->header, source->condition);
			*error = xasprintf("%s needs %s, which this kernel lacks: %s", spelling,
					   source->choices.items[0].probe, reasons.data ? reasons.data : "");
			free(spelling);
			strbuf_free(&reasons);
			free(probe);
			return -ENOENT;
		}
		if (!chosen) {
			*error = xasprintf("this kernel offers none of the event sources %s needs: %s",
					   run->header.name, reasons.data ? reasons.data : "");
			strbuf_free(&reasons);
			free(probe);
			return -ENOENT;
		}
		strbuf_free(&reasons);
		if (chosen->macro)
			add_macro(run, chosen->macro, NULL, xstrdup("1"));
		strbuf_printf(notes, "%s: using %s%s\n", run->header.name, probe,
			      chosen != &source->choices.items[0] ? " (a preferred source is missing)" : "");
		free(probe);
	}
	return 0;
}

/* ---- the command line ---- */

static void remember_value(struct tool_run *run, const struct tool_option *option, const char *text)
{
	struct tool_value value = { option->macro, xstrdup(text) };
	vec_push(&run->values, value);
}

const char *tool_run_value(const struct tool_run *run, const char *macro)
{
	for (int i = run->values.count - 1; i >= 0; i--)
		if (strcmp(run->values.items[i].macro, macro) == 0)
			return run->values.items[i].text;
	return NULL;
}

const char *tool_run_program(const struct tool_run *run)
{
	if (run->program)
		return run->program;
	const struct tool *target = run->header.alias_of ? tool_find(run->header.alias_of) : NULL;
	return target ? target->text : run->tool->text;
}

/* argv with an alias's arguments after argv[0]; *fixed_end is the index
 * after them. The caller frees the array (not the strings, or the alias's
 * words, which are in *words). */
static char **alias_argv(const struct tool_header *header, int argc, char **argv, int *new_argc,
			 int *fixed_end, char **words)
{
	char **result = xcalloc((size_t)argc + 2 + strlen(header->alias_args ? header->alias_args : ""),
				sizeof(*result));
	int count = 0;
	result[count++] = argv[0];
	*words = header->alias_args ? xstrdup(header->alias_args) : NULL;
	char *save = NULL;
	for (char *word = *words ? strtok_r(*words, " \t", &save) : NULL; word;
	     word = strtok_r(NULL, " \t", &save))
		result[count++] = word;
	*fixed_end = count;
	for (int i = 1; i < argc; i++)
		result[count++] = argv[i];
	*new_argc = count;
	return result;
}

/* A tool whose probes come from its arguments (funccount, trace...) has a
 * generator; its program is the generated text followed by the tool's file,
 * which holds what does not depend on the arguments (headers, intervals).
 * `--source` with no arguments shows the file alone. */
static int generate_program(struct tool_run *run, char **error)
{
	const struct tool_generator *generator = tool_generator_find(run->tool->name);
	if (!generator)
		return 0;
	bool any_specs = false;
	for (int i = 0; i < run->header.options.count; i++) {
		const struct tool_option *option = &run->header.options.items[i];
		if (option->kind == TOOL_VALUE_SPECS && tool_run_value(run, option->macro))
			any_specs = true;
	}
	if (!any_specs && run->source)
		return 0;
	struct strbuf program;
	strbuf_init(&program);
	int status = generator->generate(run, &program, error);
	if (status < 0) {
		strbuf_free(&program);
		return status;
	}
	strbuf_printf(&program, "\n%s", run->tool->text);
	run->program = strbuf_release(&program);
	return 0;
}

enum {
	GENERIC_JSON = 1000,
	GENERIC_SOURCE,
	GENERIC_DRY_RUN,
	GENERIC_MAN,
	GENERIC_OPTION_BASE = 2000, /* + index of a tool option that has only a long name */
};

int tool_configure(const struct tool *tool, int argc, char **argv, struct tool_run *run,
		   struct strbuf *notes, char **error)
{
	memset(run, 0, sizeof(*run));
	run->tool = tool;
	int status = tool_header_parse(tool->name, tool->text, &run->header, error);
	if (status < 0)
		return status;
	const struct tool_header *header = &run->header;
	int option_count = header->options.count;
	int fixed_end = 1;
	char *alias_words = NULL;
	argv = alias_argv(header, argc, argv, &argc, &fixed_end, &alias_words);
	struct option *long_options = xcalloc((size_t)option_count + 8, sizeof(*long_options));
	char **values = xcalloc((size_t)option_count + 1, sizeof(*values));
	struct strbuf short_options;
	int long_count = 0;
	strbuf_init(&short_options);
	strbuf_puts(&short_options, ":hv");
	for (int i = 0; i < option_count; i++) {
		const struct tool_option *option = &header->options.items[i];
		if (option->is_positional)
			continue;
		int code = option->short_name ? option->short_name : GENERIC_OPTION_BASE + i;
		if (option->short_name) {
			strbuf_putc(&short_options, option->short_name);
			if (option->argument)
				strbuf_putc(&short_options, ':');
		}
		if (option->long_name)
			long_options[long_count++] = (struct option){ option->long_name,
				option->argument ? required_argument : no_argument, NULL, code };
	}
	long_options[long_count++] = (struct option){ "help", no_argument, NULL, 'h' };
	long_options[long_count++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	long_options[long_count++] = (struct option){ "json", no_argument, NULL, GENERIC_JSON };
	long_options[long_count++] = (struct option){ "source", no_argument, NULL, GENERIC_SOURCE };
	long_options[long_count++] = (struct option){ "dry-run", no_argument, NULL, GENERIC_DRY_RUN };
	long_options[long_count++] = (struct option){ "man", no_argument, NULL, GENERIC_MAN };

	int code;
	optind = 0; /* reset getopt: the caller may have used it */
	opterr = 0;
	while (status == 0 &&
	       (code = getopt_long(argc, argv, short_options.data, long_options, NULL)) != -1) {
		switch (code) {
		case 'h':
			run->help = true;
			break;
		case 'v':
			run->verbose++;
			break;
		case GENERIC_JSON:
			run->json = true;
			break;
		case GENERIC_SOURCE:
			run->source = true;
			break;
		case GENERIC_DRY_RUN:
			run->dry_run = true;
			break;
		case GENERIC_MAN:
			run->man = true;
			break;
		case ':':
			*error = optopt ? xasprintf("option -%c needs an argument", optopt)
					: xasprintf("option %s needs an argument", argv[optind - 1]);
			status = -EINVAL;
			break;
		case '?':
			*error = optopt ? xasprintf("unknown option -%c", optopt)
					: xasprintf("unknown option %s", argv[optind - 1]);
			status = -EINVAL;
			break;
		default:
			for (int i = 0; i < option_count; i++) {
				const struct tool_option *option = &header->options.items[i];
				if (option->is_positional ||
				    code != (option->short_name ? option->short_name : GENERIC_OPTION_BASE + i))
					continue;
				if (option->is_fixed && optind > fixed_end) {
					char *spelling = option_spelling(option);
					*error = xasprintf("%s cannot be given: %s is %s %s", spelling,
							   header->name, header->alias_of,
							   header->alias_args);
					free(spelling);
					status = -EINVAL;
					break;
				}
				free(values[i]);
				values[i] = xstrdup(option->argument ? optarg : "1");
				remember_value(run, option, values[i]);
			}
		}
	}
	/* positional arguments, in their declared order */
	for (int i = 0; status == 0 && optind < argc; i++) {
		if (i == option_count) {
			*error = xasprintf("unexpected argument '%s' (see %s --help)", argv[optind],
					   header->name);
			status = -EINVAL;
		} else if (header->options.items[i].is_positional) {
			const struct tool_option *option = &header->options.items[i];
			/* an argument sharing an option's macro (fsslower's min_ms and
			 * -m) gives that option's value: one macro, the last one given */
			int slot = i;
			for (int j = 0; j < option_count; j++)
				if (!header->options.items[j].is_positional &&
				    strcmp(header->options.items[j].macro, option->macro) == 0)
					slot = j;
			long long number;
			if (slot != i && option->kind == TOOL_VALUE_INT &&
			    !parse_whole_number(argv[optind], &number)) {
				char *spelling = option_spelling(option);
				*error = xasprintf("%s needs a whole number, not '%s'", spelling, argv[optind]);
				free(spelling);
				status = -EINVAL;
				break;
			}
			if (slot != i && option->kind == TOOL_VALUE_INT &&
			    (*error = range_error(option, number))) {
				status = -EINVAL;
				break;
			}
			/* a specs argument takes the rest: trace's probes */
			do {
				free(values[slot]);
				values[slot] = xstrdup(argv[optind++]);
				remember_value(run, option, values[slot]);
			} while (option->kind == TOOL_VALUE_SPECS && optind < argc);
		}
	}
	add_macro(run, "JSON", NULL, xstrdup(run->json ? "1" : "0"));
	for (int i = 0; status == 0 && i < option_count; i++)
		if (values[i] && strcmp(header->options.items[i].macro, "PICTURE_FILE") == 0)
			run->picture_path = xstrdup(values[i]);
	for (int i = 0; status == 0 && i < option_count; i++)
		status = define_option(run, &header->options.items[i], values[i], error);
	if (status == 0)
		status = resolve_sizes(run, values, error);
	if (status == 0 && !run->help && !run->source && !run->man)
		status = choose_sources(run, notes, error);
	if (status == 0 && !run->help && !run->man)
		status = generate_program(run, error);
	for (int i = 0; i < option_count; i++)
		free(values[i]);
	free(values);
	free(long_options);
	free(argv);
	free(alias_words);
	strbuf_free(&short_options);
	return status;
}

void tool_run_free(struct tool_run *run)
{
	for (int i = 0; i < run->macros.count; i++) {
		free((char *)run->macros.items[i].name);
		free((char *)run->macros.items[i].parameter);
		free((char *)run->macros.items[i].body);
	}
	free(run->macros.items);
	for (int i = 0; i < run->map_sizes.count; i++) {
		free((char *)run->map_sizes.items[i].map);
		free((char *)run->map_sizes.items[i].option);
	}
	free(run->map_sizes.items);
	for (int i = 0; i < run->values.count; i++)
		free(run->values.items[i].text);
	free(run->values.items);
	free(run->program);
	free(run->picture_path);
	tool_header_free(&run->header);
}

/* ---- listings, help and man pages ---- */

void tool_print_list(FILE *out)
{
	for (const struct tool *tool = tool_table; tool->name; tool++) {
		struct tool_header header;
		char *error = NULL;
		if (tool_header_parse(tool->name, tool->text, &header, &error) == 0)
			fprintf(out, "%-16s %s\n", tool->name, header.summary);
		else
			fprintf(out, "%-16s (broken header: %s)\n", tool->name, error);
		free(error);
		tool_header_free(&header);
	}
}

/* "-p, --pid=PID" as --help shows it. */
static char *help_spelling(const struct tool_option *option)
{
	const char *argument = option->argument ? option->argument : "";
	if (option->short_name && option->long_name)
		return xasprintf("-%c, --%s%s%s", option->short_name, option->long_name,
				 option->argument ? "=" : "", argument);
	if (option->short_name)
		return xasprintf("-%c%s%s", option->short_name, option->argument ? " " : "", argument);
	return xasprintf("--%s%s%s", option->long_name, option->argument ? "=" : "", argument);
}

/* One --help line; long-only options line up under the long names. */
static void print_help_line(const struct tool_option *option, FILE *out)
{
	char *spelling = option->is_positional ? xstrdup(option->argument) : help_spelling(option);
	fprintf(out, "  %s%-*s %s\n", option->short_name || option->is_positional ? "" : "    ",
		option->short_name || option->is_positional ? 26 : 22, spelling, option->help);
	free(spelling);
}

static const struct tool_option generic_options[] = {
	{ .long_name = "json", .help = "Print newline-delimited JSON records" },
	{ .long_name = "source", .help = "Print the tool's program and exit" },
	{ .long_name = "dry-run", .help = "Compile and verify, attach nothing" },
	{ .short_name = 'v', .long_name = "verbose", .help = "Say which event sources were chosen" },
	{ .short_name = 'h', .long_name = "help", .help = "Show this help" },
};

static void print_synopsis(const struct tool_header *header, FILE *out)
{
	fprintf(out, "sonde %s [OPTION...]", header->name);
	int optional = 0;
	for (int i = 0; i < header->options.count; i++) {
		if (header->options.items[i].is_positional) {
			fprintf(out, " [%s", header->options.items[i].argument);
			optional++;
		}
	}
	while (optional-- > 0)
		fputc(']', out);
}

/* Prints text word-wrapped at `width` columns; '\n' starts a paragraph. */
static void print_wrapped(const char *text, int width, FILE *out)
{
	int column = 0;
	for (const char *p = text; *p;) {
		if (*p == '\n') {
			fputs("\n\n", out);
			column = 0;
			p++;
			continue;
		}
		if (*p == ' ') {
			p++;
			continue;
		}
		int length = (int)strcspn(p, " \n");
		if (column && column + 1 + length > width) {
			fputc('\n', out);
			column = 0;
		} else if (column) {
			fputc(' ', out);
			column++;
		}
		fwrite(p, 1, (size_t)length, out);
		column += length;
		p += length;
	}
	fputc('\n', out);
}

void tool_print_help(const struct tool_header *header, FILE *out)
{
	fputs("Usage: ", out);
	print_synopsis(header, out);
	fprintf(out, "\n%s\n", header->summary);
	if (header->about) {
		fputc('\n', out);
		print_wrapped(header->about, 78, out);
	}
	fputc('\n', out);
	for (int i = 0; i < header->options.count; i++)
		if (!header->options.items[i].is_fixed)
			print_help_line(&header->options.items[i], out);
	for (size_t i = 0; i < sizeof(generic_options) / sizeof(generic_options[0]); i++)
		print_help_line(&generic_options[i], out);
	fputs("\nEXAMPLES:\n", out);
	for (int i = 0; i < header->examples.count; i++)
		fprintf(out, "    %-34s # %s\n", header->examples.items[i].text,
			header->examples.items[i].explanation);
}

/* Text for roff: a leading '.' or '\'' and backslashes escaped. */
static void roff_text(const char *text, FILE *out)
{
	bool line_start = true;
	for (const char *p = text; *p; p++) {
		if (line_start && (*p == '.' || *p == '\''))
			fputs("\\&", out);
		if (*p == '\\')
			fputs("\\e", out);
		else if (*p == '-')
			fputs("\\-", out);
		else
			fputc(*p, out);
		line_start = *p == '\n';
	}
}

static void roff_notes(const char *title, const struct tool_note *notes, int count, FILE *out)
{
	if (count == 0)
		return;
	fprintf(out, ".SH %s\n", title);
	for (int i = 0; i < count; i++) {
		fputs(".TP\n.B ", out);
		roff_text(notes[i].text, out);
		fputc('\n', out);
		roff_text(notes[i].explanation, out);
		fputc('\n', out);
	}
}

void tool_print_man(const struct tool_header *header, FILE *out)
{
	char upper[64];
	size_t i;
	for (i = 0; header->name[i] && i < sizeof(upper) - 1; i++)
		upper[i] = (char)toupper((unsigned char)header->name[i]);
	upper[i] = '\0';
	fprintf(out, ".TH SONDE-%s 8 \"\" \"sonde\" \"System Manager's Manual\"\n", upper);
	fputs(".SH NAME\n", out);
	fprintf(out, "sonde-%s \\- ", header->name);
	roff_text(header->summary, out);
	fputs("\n.SH SYNOPSIS\n.B ", out);
	print_synopsis(header, out);
	fputs("\n.SH DESCRIPTION\n", out);
	roff_text(header->about ? header->about : header->summary, out);
	fprintf(out, "\n.PP\nAlso available as \\fB%s\\fR when installed with tool links.\n",
		header->name);
	fputs(".SH OPTIONS\n", out);
	for (int j = 0; j < header->options.count; j++) {
		const struct tool_option *option = &header->options.items[j];
		if (option->is_fixed)
			continue;
		char *spelling = option->is_positional ? xstrdup(option->argument) : help_spelling(option);
		fputs(".TP\n.B ", out);
		roff_text(spelling, out);
		fputc('\n', out);
		roff_text(option->help, out);
		fputc('\n', out);
		free(spelling);
	}
	for (size_t j = 0; j < sizeof(generic_options) / sizeof(generic_options[0]); j++) {
		char *spelling = help_spelling(&generic_options[j]);
		fputs(".TP\n.B ", out);
		roff_text(spelling, out);
		fputc('\n', out);
		roff_text(generic_options[j].help, out);
		fputc('\n', out);
		free(spelling);
	}
	roff_notes("EXAMPLES", header->examples.items, header->examples.count, out);
	roff_notes("FIELDS", header->fields.items, header->fields.count, out);
	if (header->overhead) {
		fputs(".SH OVERHEAD\n", out);
		roff_text(header->overhead, out);
		fputc('\n', out);
	}
	fputs(".SH SOURCES\nThe first event source of each line that the running kernel offers is used"
	      " (\\fB\\-v\\fR says which):\n", out);
	for (int j = 0; j < header->sources.count; j++) {
		const struct tool_source *source = &header->sources.items[j];
		fputs(".IP \\(bu 2\n", out);
		if (source->condition) {
			char *spelling = condition_spelling(header, source->condition);
			fputs("With ", out);
			roff_text(spelling, out);
			fputs(": ", out);
			free(spelling);
		}
		for (int k = 0; k < source->choices.count; k++) {
			if (k > 0)
				fputs(", else ", out);
			roff_text(source->choices.items[k].probe, out);
		}
		fputc('\n', out);
	}
	fputs(".SH SEE ALSO\n.BR sonde (8)\n", out);
}
