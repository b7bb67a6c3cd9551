/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Golden code-generation tests: every tests/golden/NAME.bt is compiled with
 * the -d dump (AST, IR on virtual registers, final BPF instructions) and the
 * dump must equal tests/golden/NAME.expected. After an intended change to
 * code generation, regenerate with SONDE_UPDATE_GOLDEN=1 and review the diff
 * of the .expected files like any other code change.
 *
 * The same holds for tools run with given options (tests/golden/tools/),
 * which also shows that an option left off costs no instructions.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/program.h"
#include "common/util.h"
#include "compiler/compiler.h"
#include "toolkit/tool.h"

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Compiles source with options, dumps it, and compares with (or, when
 * updating, writes) expected_path. Returns the instruction count, or -1
 * after printing a FAIL line. */
static int check_listing(const char *name, struct source *source, struct compile_options *options,
			 const char *expected_path, bool update)
{
	char *dump = NULL;
	size_t dump_length = 0;
	FILE *out = open_memstream(&dump, &dump_length);
	struct diag diag;
	struct program program = { 0 };
	int instructions = -1;

	diag_init(&diag, source, out);
	options->dump = out;
	int result = compile_program(source, options, &program, &diag);
	fclose(out);
	char *expected = read_file(expected_path, NULL);
	if (update && result == 0) {
		FILE *file = fopen(expected_path, "w");
		if (file) {
			fputs(dump, file);
			fclose(file);
		}
		printf("PASS %s (updated)\n", name);
	} else if (result == 0 && expected && strcmp(expected, dump) == 0) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: %s (regenerate with SONDE_UPDATE_GOLDEN=1 and diff)\n", name,
		       result ? "does not compile" : expected ? "listing differs" : "no .expected file");
		if (result)
			fputs(dump, stdout);
	}
	if (result == 0 && (update || (expected && strcmp(expected, dump) == 0))) {
		instructions = 0;
		for (int i = 0; i < program.probes.count; i++)
			instructions += program.probes.items[i].insn_count;
	}
	free(expected);
	free(dump);
	compile_free(&program);
	return instructions;
}

/* The .bt/.args files of dir, without the extension, sorted. */
static int list_names(const char *dir, const char *extension, char ***names_out)
{
	VEC(char *) names = { 0 };
	DIR *handle = opendir(dir);
	struct dirent *entry;
	size_t extension_length = strlen(extension);

	while (handle && (entry = readdir(handle))) {
		size_t length = strlen(entry->d_name);
		if (length > extension_length &&
		    strcmp(entry->d_name + length - extension_length, extension) == 0)
			vec_push(&names, xstrndup(entry->d_name, length - extension_length));
	}
	if (handle)
		closedir(handle);
	qsort(names.items, (size_t)names.count, sizeof(char *), compare_names);
	*names_out = names.items;
	return names.count;
}

/*
 * Tools: tests/golden/tools/CASE.args holds a tool's command line; its
 * listing is CASE.expected. A case named TOOL-default is the tool without
 * options; every other case of the same tool must cost more instructions,
 * which is what shows that an option that is off costs none.
 */
static void check_tools(const char *dir, bool update, int *passed, int *failed)
{
	char **names;
	int count = list_names(dir, ".args", &names);
	int *sizes = calloc((size_t)count + 1, sizeof(int));

	for (int i = 0; i < count; i++) {
		char *args_path = xasprintf("%s/%s.args", dir, names[i]);
		char *expected_path = xasprintf("%s/%s.expected", dir, names[i]);
		char *line = read_file(args_path, NULL);
		char *argv[32];
		int argc = 0;
		char *save = NULL;
		struct tool_run run;
		struct strbuf notes;
		char *error = NULL;
		const struct tool *tool;

		sizes[i] = -1;
		for (char *word = line ? strtok_r(line, " \t\n", &save) : NULL; word && argc < 31;
		     word = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = word;
		argv[argc] = NULL;
		strbuf_init(&notes);
		tool = argc ? tool_find(argv[0]) : NULL;
		if (!tool) {
			printf("FAIL tools/%s: no tool named in %s\n", names[i], args_path);
			(*failed)++;
		} else if (tool_configure(tool, argc, argv, &run, &notes, &error) < 0) {
			printf("FAIL tools/%s: %s\n", names[i], error);
			(*failed)++;
			tool_run_free(&run);
		} else {
			struct source source = { .filename = tool->name, .text = tool->text };
			struct compile_options options = {
				.max_strlen = run.header.max_strlen ? run.header.max_strlen : 64,
				.macros = run.macros.items, .macro_count = run.macros.count,
				.join_printf = true, .drop_empty_probes = true,
			};
			char *label = xasprintf("tools/%s", names[i]);
			sizes[i] = check_listing(label, &source, &options, expected_path, update);
			if (sizes[i] < 0)
				(*failed)++;
			else
				(*passed)++;
			free(label);
			tool_run_free(&run);
		}
		free(error);
		strbuf_free(&notes);
		free(line);
		free(args_path);
		free(expected_path);
	}
	for (int i = 0; i < count; i++) {
		size_t length = strlen(names[i]);
		if (length < 8 || strcmp(names[i] + length - 8, "-default") != 0 || sizes[i] < 0)
			continue;
		for (int j = 0; j < count; j++) {
			if (j == i || strncmp(names[j], names[i], length - 7) != 0 || sizes[j] < 0)
				continue;
			if (sizes[j] > sizes[i]) {
				printf("PASS tools/%s costs %d instructions, %d without options\n", names[j],
				       sizes[j], sizes[i]);
				(*passed)++;
			} else {
				printf("FAIL tools/%s costs %d instructions, not more than the %d without options\n",
				       names[j], sizes[j], sizes[i]);
				(*failed)++;
			}
		}
	}
	for (int i = 0; i < count; i++)
		free(names[i]);
	free(names);
	free(sizes);
}

int main(void)
{
	const char *dir = getenv("SONDE_GOLDEN_DIR") ? getenv("SONDE_GOLDEN_DIR") : "tests/golden";
	bool update = getenv("SONDE_UPDATE_GOLDEN") != NULL;
	char **names;
	int count = list_names(dir, ".bt", &names);
	int passed = 0, failed = 0;

	for (int i = 0; i < count; i++) {
		char *source_path = xasprintf("%s/%s.bt", dir, names[i]);
		char *expected_path = xasprintf("%s/%s.expected", dir, names[i]);
		char *text = read_file(source_path, NULL);
		struct source source = { .filename = source_path, .text = text ? text : "" };
		struct compile_options options = { .max_strlen = 64 };

		if (check_listing(names[i], &source, &options, expected_path, update) < 0)
			failed++;
		else
			passed++;
		free(text);
		free(source_path);
		free(expected_path);
		free(names[i]);
	}
	free(names);
	char *tools_dir = xasprintf("%s/tools", dir);
	check_tools(tools_dir, update, &passed, &failed);
	free(tools_dir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
