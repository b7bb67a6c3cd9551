/* The builtin function table: every family's records; see builtins.h. */
#include "builtins.h"

#include <stddef.h>
#include <string.h>

static const struct function_def *const families[] = {
	builtins_output,
	builtins_time,
	builtins_strings,
	builtins_net,
	builtins_maps,
	builtins_stacks,
	builtins_kernel,
	builtins_aggregations,
	builtins_tool_output,
};

const struct function_def *function_lookup(const char *name)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct function_def *def = families[f]; def->name; def++)
			if (strcmp(def->name, name) == 0)
				return def;
	return NULL;
}
