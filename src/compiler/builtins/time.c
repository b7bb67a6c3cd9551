/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtins, family: Time: the wall-clock time printed, timestamps formatted in user space, and the
 * kernel's clocks (nsecs, nsecs(monotonic|boot|tai|sw_tai), elapsed, jiffies).
 */
#include "family.h"

#include <time.h>

static void check_time(struct sema *sema, struct node *call)
{
	call->type = type_void();
	if (call->args) {
		sema_check_expr(sema, call->args);
		if (call->args->kind != NODE_STRING) {
			sema_error(sema, call->args->loc, "time() needs a string literal format");
			return;
		}
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_TIME);
	event->record_size = 8;
	event->format = xstrdup(call->args ? call->args->string_value : "%H:%M:%S\n");
}

static void check_strftime(struct sema *sema, struct node *call)
{
	struct node *format = call->args, *when = call->args->next;
	sema_check_expr(sema, format);
	sema_check_expr(sema, when);
	call->type = type_new(TYPE_INT);
	call->type->size = 8;
	call->type->strftime_format = xstrdup(format->kind == NODE_STRING ? format->string_value : "");
	if (format->kind != NODE_STRING)
		sema_error(sema, format->loc, "strftime() needs a string literal format");
	if (when->type && when->type->kind != TYPE_NONE && !sema_is_int(when))
		sema_error(sema, when->loc, "strftime() needs an integer time in nanoseconds");
}

static struct value generate_time(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, NULL);
	return value_none();
}

static struct value generate_strftime(struct codegen *gen, struct node *call)
{
	return gen_expr(gen, call->args->next);
}

static struct value generate_nsecs(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_ktime_get_ns), node->type);
}

/* the config map holds the start time, taken when the programs were attached */
static struct value generate_elapsed(struct codegen *gen, struct node *node)
{
	int start = gen_config_load(gen, (int)offsetof(struct program_config, start_ns));
	int reg = gen_helper_value(gen, BPF_FUNC_ktime_get_ns);
	ir_alu(&gen->fn, BPF_SUB, reg, start);
	return value_reg(reg, node->type);
}

static struct value generate_jiffies(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_jiffies64), node->type);
}

/* nsecs(clock): which of the kernel's clocks; nsecs() is nsecs, CLOCK_MONOTONIC */
static const char *const clock_names[] = { "monotonic", "boot", "tai", "sw_tai" };
enum { CLOCK_MODE_MONOTONIC, CLOCK_MODE_BOOT, CLOCK_MODE_TAI, CLOCK_MODE_SW_TAI, CLOCK_MODE_COUNT };

static void check_nsecs_call(struct sema *sema, struct node *call)
{
	call->type = type_int(8, false);
	call->int_value = CLOCK_MODE_MONOTONIC;
	struct node *clock = call->args;
	if (!clock)
		return;
	for (int mode = 0; clock->kind == NODE_BUILTIN && mode < CLOCK_MODE_COUNT; mode++) {
		if (strcmp(clock->name, clock_names[mode]) == 0) {
			call->int_value = (uint64_t)mode;
			clock->type = type_int(8, false);
			return;
		}
	}
	sema_error(sema, clock->loc, "nsecs() takes a clock: monotonic, boot, tai or sw_tai");
}

/* TAI minus boot time now, in nanoseconds: sw_tai is the boot clock plus
 * this, for kernels without bpf_ktime_get_tai_ns (before 6.1) */
static int64_t tai_minus_boot(void)
{
	struct timespec boot_before, tai, boot_after;
	clock_gettime(CLOCK_BOOTTIME, &boot_before);
	clock_gettime(CLOCK_TAI, &tai);
	clock_gettime(CLOCK_BOOTTIME, &boot_after);
	int64_t boot = ((int64_t)boot_before.tv_sec * 1000000000 + boot_before.tv_nsec +
			(int64_t)boot_after.tv_sec * 1000000000 + boot_after.tv_nsec) / 2;
	return (int64_t)tai.tv_sec * 1000000000 + tai.tv_nsec - boot;
}

static struct value generate_nsecs_call(struct codegen *gen, struct node *call)
{
	static const int helpers[] = { BPF_FUNC_ktime_get_ns, BPF_FUNC_ktime_get_boot_ns,
				       BPF_FUNC_ktime_get_tai_ns, BPF_FUNC_ktime_get_boot_ns };
	int reg = gen_helper_value(gen, helpers[call->int_value]);
	if (call->int_value == CLOCK_MODE_SW_TAI) {
		int offset = gen_const_reg(gen, tai_minus_boot());
		ir_alu(&gen->fn, BPF_ADD, reg, offset);
	}
	return value_reg(reg, call->type);
}

const struct variable_def variables_time[] = {
	{ .name = "nsecs", .check = builtin_check_u64, .generate = generate_nsecs },
	{ .name = "elapsed", .check = builtin_check_u64, .generate = generate_elapsed },
	{ .name = "jiffies", .check = builtin_check_u64, .generate = generate_jiffies },
	{ 0 },
};

const struct function_def builtins_time[] = {
	{ FUNCTION(time, 0, 1) },
	{ FUNCTION(strftime, 2, 2) },
	{ .name = "nsecs", .min_args = 0, .max_args = 1, .check = check_nsecs_call,
	  .generate = generate_nsecs_call },
	{ 0 },
};
