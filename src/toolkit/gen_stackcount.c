/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stackcount's program: one probe per event the pattern matches, each
 * counting the stacks it was hit with in one map keyed by the process name
 * (and pid, with -P or -p), the user stack and the kernel stack, as BCC's
 * stackcount keys its counts; -K or -U keeps one of the two stacks.
 * tools/stackcount.bt prints the map with print_stacks().
 */
#include "generator.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bccspec.h"

int stackcount_generate(const struct tool_run *run, struct strbuf *program, char **error)
{
	const char *pattern = tool_run_value(run, "PATTERN");
	bool kernel_only = tool_run_value(run, "KERNEL_ONLY") != NULL;
	bool user_only = tool_run_value(run, "USER_ONLY") != NULL;
	bool per_pid = tool_run_value(run, "PERPID") || tool_run_value(run, "PID");
	struct bcc_probe probe;
	bcc_target_list targets = { 0 };
	if (!pattern) {
		*error = xstrdup("give a pattern whose stacks to count, such as 'submit_bio' or "
				 "'t:block:block_rq_issue'");
		return -EINVAL;
	}
	if (kernel_only && user_only) {
		*error = xstrdup("-K and -U are mutually exclusive; without either, both stacks are"
				 " counted");
		return -EINVAL;
	}
	int status = bcc_probe_parse(pattern, strlen(pattern), 0, &probe, error);
	if (status < 0)
		return status;
	status = bcc_probe_expand(&probe, tool_run_value(run, "REGEX") != NULL, &targets, error);
	if (status == 0) {
		char *quoted = generator_quote(pattern);
		strbuf_printf(program, "BEGIN\n{\n\tif (!JSON && !FOLDED) {\n\t\tprintf(\"Tracing %d "
			      "functions for \\\"%%s\\\"... Hit Ctrl-C to end.\\n\", %s);\n\t}\n}\n\n",
			      targets.count, quoted);
		free(quoted);
	}
	const char *stacks = kernel_only ? "kstack" : user_only ? "ustack" : "ustack, kstack";
	for (int i = 0; status == 0 && i < targets.count; i++)
		strbuf_printf(program, "%s\n/ (PID == 0 || pid == PID) && (CPU < 0 || cpu == CPU) /\n{\n"
			      "\t@bcc_stacks[comm, %s%s] = count();\n}\n\n", targets.items[i].probe,
			      per_pid ? "pid, " : "", stacks);
	bcc_target_list_free(&targets);
	bcc_probe_free(&probe);
	return status;
}
