/* SPDX-License-Identifier: Apache-2.0 */
/* The builtin function table: every family's records; see builtins.h. */
#include "family.h"

#include "../../aggregations/aggregation.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const struct function_def *const families[] = {
	builtins_output,
	builtins_time,
	builtins_strings,
	builtins_net,
	builtins_maps,
	builtins_stacks,
	builtins_kernel,
	builtins_tool_output,
	builtins_options,
	builtins_context,
	builtins_unsupported,
};

const struct function_def *function_lookup(const char *name)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct function_def *def = families[f]; def->name; def++)
			if (strcmp(def->name, name) == 0)
				return def;
	/* each aggregation's record (aggregations/) carries its function */
	const struct aggregation *aggregation = aggregation_lookup(name);
	return aggregation ? &aggregation->function : NULL;
}

static const struct variable_def *const variable_families[] = {
	variables_task,
	variables_context,
	variables_time,
	variables_kernel,
};

/* "arg3" for a numbered "arg": the number, or -1 */
static int variable_number(const char *name, const char *prefix)
{
	size_t length = strlen(prefix);
	if (strncmp(name, prefix, length) != 0 || !name[length])
		return -1;
	char *end;
	long number = strtol(name + length, &end, 10);
	if (*end || number < 0 || number > 15)
		return -1;
	return (int)number;
}

const struct variable_def *variable_lookup(const char *name, uint64_t *index)
{
	for (size_t f = 0; f < sizeof(variable_families) / sizeof(variable_families[0]); f++) {
		for (const struct variable_def *def = variable_families[f]; def->name; def++) {
			if (!def->numbered && strcmp(def->name, name) == 0)
				return def;
			int number = def->numbered ? variable_number(name, def->name) : -1;
			if (number >= 0) {
				*index = (uint64_t)number;
				return def;
			}
		}
	}
	return NULL;
}

void builtin_check_u64(struct sema *sema, struct node *node)
{
	node->type = type_int(8, false);
}
