/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: the ones bpftrace 0.17 has that sonde does
 * not implement. Each is a record whose check says what is missing and
 * why, so that a script using one is not told it misspelt a name.
 */
#include "family.h"

static void check_path(struct sema *sema, struct node *call)
{
	call->type = type_none();
	sema_error(sema, call->loc, "path() is not supported by sonde: it needs the kernel's "
		   "bpf_d_path(), which only fentry/fexit programs of allow-listed functions may call");
}

static void check_override(struct sema *sema, struct node *call)
{
	call->type = type_none();
	sema_error(sema, call->loc, "override() is not supported by sonde: it needs a kprobe on a "
		   "function open to error injection and a kernel built with CONFIG_BPF_KPROBE_OVERRIDE");
}

static void check_unwatch(struct sema *sema, struct node *call)
{
	call->type = type_none();
	sema_error(sema, call->loc, "unwatch() is not supported by sonde, which has no watchpoint probes");
}

/* never reached: the check refuses every call */
static struct value generate_unsupported(struct codegen *gen, struct node *call)
{
	return value_none();
}

const struct function_def builtins_unsupported[] = {
	{ .name = "path", .min_args = 0, .max_args = -1, .check = check_path,
	  .generate = generate_unsupported },
	{ .name = "override", .min_args = 0, .max_args = -1, .check = check_override,
	  .generate = generate_unsupported },
	{ .name = "unwatch", .min_args = 0, .max_args = -1, .check = check_unwatch,
	  .generate = generate_unsupported },
	{ 0 },
};
