/* Reading /proc/kallsyms; see kallsyms.h. */
#include "kallsyms.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool kallsyms_parse_line(const char *line, struct kallsyms_line *out)
{
	char *cursor;

	out->address = strtoull(line, &cursor, 16);
	if (cursor == line || cursor[0] != ' ' || !cursor[1] || cursor[2] != ' ')
		return false;
	out->type = cursor[1];
	out->name = cursor + 3;
	out->name_length = strcspn(out->name, " \t\n");
	out->module = NULL;
	out->module_length = 0;
	if (out->name[out->name_length] == '\t' && out->name[out->name_length + 1] == '[') {
		out->module = out->name + out->name_length + 2;
		out->module_length = strcspn(out->module, "]\n");
	}
	return out->name_length > 0;
}

int kallsyms_lookup(const char *symbol, unsigned long long *address)
{
	FILE *file = fopen("/proc/kallsyms", "re");
	char *line = NULL;
	size_t capacity = 0;
	size_t symbol_length = strlen(symbol);
	int err = -ENOENT;

	if (!file)
		return -errno;
	while (getline(&line, &capacity, file) > 0) {
		struct kallsyms_line parsed;
		if (!kallsyms_parse_line(line, &parsed) || parsed.name_length != symbol_length ||
		    strncmp(parsed.name, symbol, symbol_length) != 0)
			continue;
		/* Zero addresses mean kptr_restrict hides them from us. */
		err = parsed.address ? 0 : -EACCES;
		if (parsed.address)
			*address = parsed.address;
		break;
	}
	free(line);
	fclose(file);
	return err;
}
