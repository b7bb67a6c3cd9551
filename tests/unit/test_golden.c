/*
 * Golden code-generation tests: every tests/golden/NAME.bt is compiled with
 * the -d dump (AST, IR on virtual registers, final BPF instructions) and the
 * dump must equal tests/golden/NAME.expected. After an intended change to
 * code generation, regenerate with SONDE_UPDATE_GOLDEN=1 and review the diff
 * of the .expected files like any other code change.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/diag.h"
#include "common/program.h"
#include "common/util.h"
#include "compiler/compiler.h"

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	const char *dir = getenv("SONDE_GOLDEN_DIR") ? getenv("SONDE_GOLDEN_DIR") : "tests/golden";
	bool update = getenv("SONDE_UPDATE_GOLDEN") != NULL;
	DIR *handle = opendir(dir);
	if (!handle) {
		printf("FAIL golden: cannot open %s\n0 passed, 1 failed\n", dir);
		return 1;
	}
	VEC(char *) names = { 0 };
	struct dirent *entry;
	while ((entry = readdir(handle))) {
		size_t length = strlen(entry->d_name);
		if (length > 3 && strcmp(entry->d_name + length - 3, ".bt") == 0)
			vec_push(&names, xstrndup(entry->d_name, length - 3));
	}
	closedir(handle);
	qsort(names.items, names.count, sizeof(char *), compare_names);
	int passed = 0, failed = 0;
	for (int i = 0; i < names.count; i++) {
		char *source_path = xasprintf("%s/%s.bt", dir, names.items[i]);
		char *expected_path = xasprintf("%s/%s.expected", dir, names.items[i]);
		char *text = read_file(source_path, NULL);
		char *dump = NULL;
		size_t dump_length = 0;
		FILE *out = open_memstream(&dump, &dump_length);
		struct source source = { .filename = source_path, .text = text ? text : "" };
		struct diag diag;
		diag_init(&diag, &source, out);
		struct compile_options options = { .max_strlen = 64, .dump = out };
		struct program program = { 0 };
		int result = compile_program(&source, &options, &program, &diag);
		fclose(out);
		char *expected = read_file(expected_path, NULL);
		if (update) {
			FILE *file = fopen(expected_path, "w");
			if (file) {
				fputs(dump, file);
				fclose(file);
			}
			printf("PASS %s (updated)\n", names.items[i]);
			passed++;
		} else if (result == 0 && expected && strcmp(expected, dump) == 0) {
			printf("PASS %s\n", names.items[i]);
			passed++;
		} else {
			printf("FAIL %s: %s (regenerate with SONDE_UPDATE_GOLDEN=1 and diff)\n", names.items[i],
			       result ? "does not compile" : expected ? "listing differs" : "no .expected file");
			failed++;
		}
		free(text);
		free(expected);
		free(dump);
		free(source_path);
		free(expected_path);
		free(names.items[i]);
		program_free(&program);
	}
	free(names.items);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
