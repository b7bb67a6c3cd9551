/* The table of generated tools (generator.h). */
#include "generator.h"

#include <string.h>

static const struct tool_generator generators[] = {
	{ "argdist", argdist_generate },
	{ "funccount", funccount_generate },
	{ "stackcount", stackcount_generate },
	{ "trace", trace_generate },
};

const struct tool_generator *tool_generator_find(const char *tool)
{
	for (size_t i = 0; i < sizeof(generators) / sizeof(generators[0]); i++)
		if (strcmp(generators[i].tool, tool) == 0)
			return &generators[i];
	return NULL;
}

char *generator_quote(const char *text)
{
	struct strbuf quoted;
	strbuf_init(&quoted);
	strbuf_putc(&quoted, '"');
	for (const char *p = text; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_putc(&quoted, '\\');
		strbuf_putc(&quoted, *p);
	}
	strbuf_putc(&quoted, '"');
	return strbuf_release(&quoted);
}
