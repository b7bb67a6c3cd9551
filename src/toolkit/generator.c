/* SPDX-License-Identifier: Apache-2.0 */
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

/* Control characters as \xNN: a literal is one line, and a newline typed
 * into an argument must stay text. */
void generator_escape(struct strbuf *out, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_printf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			strbuf_printf(out, "\\x%02x", *p);
		else
			strbuf_putc(out, (char)*p);
	}
}

char *generator_quote(const char *text)
{
	struct strbuf quoted;
	strbuf_init(&quoted);
	strbuf_putc(&quoted, '"');
	generator_escape(&quoted, text);
	strbuf_putc(&quoted, '"');
	return strbuf_release(&quoted);
}
