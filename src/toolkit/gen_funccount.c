/* SPDX-License-Identifier: Apache-2.0 */
/*
 * funccount's program: one probe per function (or tracepoint, or USDT
 * probe) the pattern matches, each counting under its own name, so the
 * table names what was called. tools/funccount.bt prints the table.
 */
#include "generator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bccspec.h"

int funccount_generate(const struct tool_run *run, struct strbuf *program, char **error)
{
	const char *pattern = tool_run_value(run, "PATTERN");
	struct bcc_probe probe;
	bcc_target_list targets = { 0 };
	if (!pattern) {
		*error = xstrdup("give a pattern to count, such as 'vfs_*' or 't:syscalls:sys_enter_*'");
		return -EINVAL;
	}
	int status = bcc_probe_parse(pattern, strlen(pattern), 0, &probe, error);
	if (status < 0)
		return status;
	status = bcc_probe_expand(&probe, tool_run_value(run, "REGEX") != NULL, &targets, error);
	if (status == 0) {
		char *quoted = generator_quote(pattern);
		strbuf_printf(program, "BEGIN\n{\n\tif (!JSON) {\n\t\tprintf(\"Tracing %d functions"
			      " for \\\"%%s\\\"... Hit Ctrl-C to end.\\n\", %s);\n\t}\n}\n\n",
			      targets.count, quoted);
		free(quoted);
	}
	for (int i = 0; status == 0 && i < targets.count; i++) {
		const struct bcc_target *target = &targets.items[i];
		/* BCC names a tracepoint category:event */
		char *name = target->category ? xasprintf("%s:%s", target->category, target->name)
					      : xstrdup(target->name);
		char *quoted = generator_quote(name);
		strbuf_printf(program, "%s\n/ (PID == 0 || pid == PID) && (CPU < 0 || cpu == CPU) /\n{\n\t@counts[%s] = count();\n}\n\n",
			      target->probe, quoted);
		free(quoted);
		free(name);
	}
	bcc_target_list_free(&targets);
	bcc_probe_free(&probe);
	return status;
}
