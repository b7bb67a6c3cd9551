/* The built-in function table; see functions.h. */
#include "functions.h"

#include <string.h>

#include "codegen.h"

static const struct function_def function_table[] = {
#define FUNCTION_ENTRY(fname, min, max, agg, unsafe) \
	{ #fname, min, max, agg, unsafe, check_##fname, generate_##fname },
	FUNCTION_LIST(FUNCTION_ENTRY)
#undef FUNCTION_ENTRY
};

const struct function_def *function_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(function_table) / sizeof(function_table[0]); i++)
		if (strcmp(function_table[i].name, name) == 0)
			return &function_table[i];
	return NULL;
}

const struct function_def *function_get(int func_id)
{
	return &function_table[func_id];
}
