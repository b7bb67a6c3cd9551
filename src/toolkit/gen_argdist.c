#include "generator.h"
#include <errno.h>
int argdist_generate(const struct tool_run *run, struct strbuf *program, char **error)
{
	*error = xstrdup("not yet");
	return -ENOSYS;
}
