/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracepoint:syscalls:sys_enter_X and sys_exit_X, served in bulk from the
 * raw_syscalls tracepoints.
 *
 * Each syscall tracepoint is a perf event of its own, and the kernel
 * unregisters a perf tracepoint with a synchronous RCU grace period under a
 * global mutex: some 50 ms each, 36 s for all 722 of them. Every syscall
 * also passes raw_syscalls:sys_enter and sys_exit, whose raw tracepoints
 * detach without that wait. So when a probe names many syscalls, its
 * points are served from there instead:
 *
 *   raw_syscalls:sys_enter --> dispatcher --tail call [syscall number]--> the
 *                              (a few insns)  program of sys_enter_X, if any
 *
 * The dispatcher is a small raw-tracepoint program written here; the
 * points' programs are the compiler's, loaded as raw-tracepoint programs
 * too (a tail call keeps the context), and sit in a program array at their
 * syscall's number. They read `args` through arg_locations: the syscall's
 * arguments from the saved user registers (struct pt_regs *regs is the
 * raw tracepoint's first argument), the number and the return value from
 * the context. The record type is still the syscall's format file, so
 * args->filename and friends mean what they mean for the perf tracepoint.
 *
 * Like the syscall tracepoints, the dispatcher ignores 32-bit syscalls
 * (their numbers are another table's): it passes on only syscalls entered
 * from the 64-bit user code segment.
 *
 * One dispatcher and program array serve the points of one probe spec in
 * one direction (struct syscall_group, shared by the points); attaching the
 * first point creates them, every point then only fills its slot.
 *
 * Often there is nothing to dispatch: `@[probe] = count()` reads the name
 * from a table by the syscall number (probe_group.index), so every point
 * compiles to the same program. Each point's program begins with the
 * dispatcher's prelude as its guard (syscall_guard), and when the compiler
 * finds them all the same (probe_group.one_program) that one program is
 * attached to raw_syscalls by itself: no dispatcher, no tail call, whose
 * indirect jump was most of this path's cost over the perf tracepoints'.
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/names.h"
#include "../kernel/features.h"
#include "../kernel/tracefs.h"

extern const struct provider syscall_tracepoint_provider;

/* A probe spec's syscall tracepoints of one direction go through
 * raw_syscalls only when they are (nearly) all of that direction's. The
 * dispatcher runs on every syscall of the machine, traced or not, and a
 * BPF program on the raw_syscalls tracepoint costs the syscall some
 * 100-300 ns on this kernel even when empty; a perf syscall tracepoint
 * costs an untraced syscall only a bit test. Measured (close(-1), thread
 * CPU time): sys_enter_get* through raw_syscalls +324 ns on every syscall,
 * as perf tracepoints +49 ns; sys_enter_* +121 ns and +145 ns. So for a
 * partial wildcard the perf path is cheaper per event, and its slow
 * detaches are hidden by run.c's background release; when nearly every
 * syscall is traced the two cost the same per event and only raw_syscalls
 * detaches at once. */
#define SYSCALL_DISPATCH_SHARE 0.9
#define SYSCALL_DISPATCH_MIN 16

/* Room for every x86-64 syscall number, with space for new ones. */
#define SYSCALL_SLOTS 1024


/* Tracepoints named after a syscall's implementation rather than its
 * number's name, and syscalls newer than the headers sonde was built
 * with (x86-64 numbers are fixed once given). */
static const struct {
	const char *event_name;
	int number;
} syscall_extra_numbers[] = {
	{ "newstat", 4 }, { "newfstat", 5 }, { "newlstat", 6 }, { "sendfile64", 40 },
	{ "newuname", 63 }, { "umount", 166 }, { "uretprobe", 335 }, { "uprobe", 336 },
	{ "cachestat", 451 }, { "fchmodat2", 452 }, { "map_shadow_stack", 453 },
	{ "futex_wake", 454 }, { "futex_wait", 455 }, { "futex_requeue", 456 },
	{ "statmount", 457 }, { "listmount", 458 }, { "lsm_get_self_attr", 459 },
	{ "lsm_set_self_attr", 460 }, { "lsm_list_modules", 461 }, { "mseal", 462 },
	{ "setxattrat", 463 }, { "getxattrat", 464 }, { "listxattrat", 465 },
	{ "removexattrat", 466 }, { "open_tree_attr", 467 }, { "file_getattr", 468 },
	{ "file_setattr", 469 },
};

struct syscall_group {
	struct probe_group base;
	bool is_exit;
	int map_fd;   /* the program array; -1 until the first point attaches */
	int link_fd;  /* base.one_program: the program's own raw tracepoint link, or -1 */
	uint8_t traced[SYSCALL_SLOTS / 8];   /* a bit for each point's number */
};

static int syscall_guard(const struct probe_group *base, int members_map, struct bpf_insn *insns);

static void syscall_group_free(struct probe_group *group)
{
	free(group);
}

static int syscall_number(const char *name)
{
	int count = (int)(sizeof(syscall_extra_numbers) / sizeof(syscall_extra_numbers[0]));

	for (int i = 0; i < count; i++) {
		if (strcmp(syscall_extra_numbers[i].event_name, name) == 0)
			return syscall_extra_numbers[i].number;
	}
	return syscall_number_of(name);
}

/* "sys_enter_openat" -> its number and direction; -1 if unknown. */
static int syscall_event_number(const char *event, bool *is_exit)
{
	if (strncmp(event, "sys_enter_", 10) == 0) {
		*is_exit = false;
		return syscall_number(event + 10);
	}
	if (strncmp(event, "sys_exit_", 9) == 0) {
		*is_exit = true;
		return syscall_number(event + 9);
	}
	return -1;
}

/* How many syscall tracepoints of one direction the kernel has (0 if
 * tracefs cannot say), counted once. */
static int syscall_direction_total(bool is_exit)
{
	static int totals[2] = { -1, -1 };

	if (totals[is_exit] < 0) {
		tracepoint_list found = { 0 };
		char *error = NULL;

		totals[is_exit] = 0;
		if (tracefs_find("syscalls", is_exit ? "sys_exit_*" : "sys_enter_*", &found,
				 &error) == 0)
			totals[is_exit] = found.count;
		free(error);
		tracepoint_list_free(&found);
	}
	return totals[is_exit];
}

bool syscall_tracepoint_is_exit(const char *event)
{
	return strncmp(event, "sys_exit_", 9) == 0;
}

/* SONDE_SYSCALL_TRACEPOINTS=raw|perf overrides the choice (tests use it to
 * run one path on a few syscalls). */
bool syscall_tracepoint_dispatch_wanted(bool is_exit, int syscall_points)
{
	const char *choice = getenv("SONDE_SYSCALL_TRACEPOINTS");

	if (choice && strcmp(choice, "raw") == 0)
		return true;
	if (choice && strcmp(choice, "perf") == 0)
		return false;
	if (syscall_points < SYSCALL_DISPATCH_MIN)
		return false;
	return syscall_points >= SYSCALL_DISPATCH_SHARE * syscall_direction_total(is_exit);
}

struct probe_point *syscall_tracepoint_point(const char *event, struct probe_group **enter_group,
					     struct probe_group **exit_group)
{
	bool is_exit;
	int number = syscall_event_number(event, &is_exit);
	struct probe_group **group = is_exit ? exit_group : enter_group;
	struct probe_point *point;
	char *name;

	if (number < 0 || number >= SYSCALL_SLOTS)
		return NULL;
	if (!*group) {
		struct syscall_group *created = xcalloc(1, sizeof(*created));

		created->base.free = syscall_group_free;
		created->is_exit = is_exit;
		created->map_fd = -1;
		created->link_fd = -1;
		created->base.guard = syscall_guard;
		/* the number, as the dispatcher found it (see describe) */
		created->base.index_limit = SYSCALL_SLOTS;
		created->base.index.size = 8;
		if (is_exit) {
			created->base.index.kind = ARG_LOCATION_SAVED_REGISTER;
			created->base.index.register_offset = ARCH_SYSCALL_NUMBER;
		} else {
			created->base.index.kind = ARG_LOCATION_REGISTER;
			created->base.index.register_offset = 8;
		}
		*group = &created->base;
	}
	name = xasprintf("tracepoint:syscalls:%s", event);
	point = probe_point_new(&syscall_tracepoint_provider, name);
	free(name);
	point->target = xstrdup("syscalls");
	point->function = xstrdup(event);
	point->args_access = ARGS_LOCATED_RECORD;
	point->syscall_number = number;
	point->group_slot = number;
	point->group = *group;
	((struct syscall_group *)*group)->traced[number / 8] |= (uint8_t)(1u << (number % 8));
	(*group)->refs++;
	return point;
}

/* Where each field of the syscall's record comes from: __syscall_nr, then
 * the arguments (enter) or ret (exit), each an 8-byte slot from offset 16. */
static int syscall_tracepoint_describe(struct probe_point *point, char **error)
{
	const struct syscall_group *group = (const struct syscall_group *)point->group;
	struct tracepoint_format format;
	struct type *record;
	int err = tracefs_read_format(point->target, point->function, &format, error);

	if (err)
		return err;
	record = format.record;
	tracepoint_format_free(&format);
	free(point->arg_locations);
	point->arg_locations = xcalloc((size_t)record->field_count + 1, sizeof(*point->arg_locations));
	point->arg_count = record->field_count;
	for (int i = 0; i < record->field_count; i++) {
		struct arg_location *location = &point->arg_locations[i];
		int offset = record->fields[i].offset;
		int slot = (offset - 16) / 8;

		location->size = 8;
		if (offset == 8 && group->is_exit) {
			location->kind = ARG_LOCATION_SAVED_REGISTER;
			location->register_offset = ARCH_SYSCALL_NUMBER;
		} else if (offset == 8 || (group->is_exit && offset == 16)) {
			/* enter: the context's id; exit: the context's ret */
			location->kind = ARG_LOCATION_REGISTER;
			location->register_offset = 8;
		} else if (!group->is_exit && offset >= 16 && offset % 8 == 0 && slot < 6) {
			location->kind = ARG_LOCATION_SAVED_REGISTER;
			location->register_offset = arch_syscall_arguments[slot];
		} else {
			*error = xasprintf("cannot place field %s of %s", record->fields[i].name,
					   point->name);
			return -EINVAL;
		}
	}
	point->args_type = record;
	point->features = PROBE_HAS_ARGS;
	return 0;
}

/* The dispatcher's prelude, written instruction by instruction; a jump to
 * SYSCALL_GIVE_UP is pointed at the dispatcher's `return 0` once the
 * prelude is complete. */
#define SYSCALL_PRELUDE_MAX 32
#define SYSCALL_GIVE_UP 0x7fff

struct syscall_prelude {
	struct bpf_insn insns[SYSCALL_PRELUDE_MAX];
	int count;
};

static void prelude_add(struct syscall_prelude *prelude, struct bpf_insn insn)
{
	prelude->insns[prelude->count++] = insn;
}

#define INSN(...) prelude_add(prelude, (struct bpf_insn){ __VA_ARGS__ })

/* r1 = the task's saved user registers: through BTF-typed pointers, so
 * that reading them is a plain load rather than a helper call each. */
static void prelude_regs_btf(struct syscall_prelude *prelude)
{
	INSN(.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_task_btf);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_0);
	INSN(.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_task_pt_regs);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_8, .src_reg = BPF_REG_0);
}

/* dst = the saved register at offset: a plain load through r8 (BTF), or
 * bpf_probe_read_kernel from the raw tracepoint's regs argument. */
static void prelude_read_register(struct syscall_prelude *prelude, bool btf, int dst, int offset)
{
	if (btf) {
		INSN(.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = dst, .src_reg = BPF_REG_8,
		     .off = offset);
		return;
	}
	INSN(.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_6);
	INSN(.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3, .imm = offset);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10);
	INSN(.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 8);
	INSN(.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_read_kernel);
	INSN(.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = SYSCALL_GIVE_UP);
	INSN(.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = dst, .src_reg = BPF_REG_10, .off = -8);
}

/* The dispatcher's prelude: r7 = the syscall's number; give up at once
 * unless its bit is set in the group's bitmap (so an untraced syscall
 * costs a dozen instructions and, on entry, no helper call), then unless
 * it came from 64-bit code; r3 = the slot to tail-call. */
static void syscall_prelude_build(struct syscall_prelude *prelude, bool is_exit, bool btf,
				  int bitmap_fd, int give_up_after)
{
	prelude->count = 0;
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1);
	if (btf && is_exit)
		prelude_regs_btf(prelude);
	if (is_exit)   /* sys_exit(regs, ret): the number is the saved orig_ax */
		prelude_read_register(prelude, btf, BPF_REG_7, ARCH_SYSCALL_NUMBER);
	else           /* sys_enter(regs, id) */
		INSN(.code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_7, .src_reg = BPF_REG_6,
		     .off = 8);
	INSN(.code = BPF_JMP | BPF_JGT | BPF_K, .dst_reg = BPF_REG_7, .off = SYSCALL_GIVE_UP,
	     .imm = SYSCALL_SLOTS - 1);
	/* bitmap[r7 / 8] >> (r7 % 8) & 1 */
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_7);
	INSN(.code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_1, .imm = 3);
	INSN(.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_2,
	     .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = bitmap_fd);
	INSN(.imm = 0);
	INSN(.code = BPF_ALU64 | BPF_ADD | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1);
	INSN(.code = BPF_LDX | BPF_MEM | BPF_B, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_2);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_7);
	INSN(.code = BPF_ALU64 | BPF_AND | BPF_K, .dst_reg = BPF_REG_2, .imm = 7);
	INSN(.code = BPF_ALU64 | BPF_RSH | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_2);
	INSN(.code = BPF_ALU64 | BPF_AND | BPF_K, .dst_reg = BPF_REG_1, .imm = 1);
	INSN(.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_1, .off = SYSCALL_GIVE_UP);
	if (btf && !is_exit)
		prelude_regs_btf(prelude);
	prelude_read_register(prelude, btf, BPF_REG_1, ARCH_MODE_REGISTER);
	INSN(.code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_1, .off = SYSCALL_GIVE_UP,
	     .imm = ARCH_USER64_CODE_SEGMENT);
	INSN(.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_7);
	for (int at = 0; at < prelude->count; at++) {
		if (BPF_CLASS(prelude->insns[at].code) == BPF_JMP &&
		    prelude->insns[at].off == SYSCALL_GIVE_UP)
			prelude->insns[at].off =
				(int16_t)(prelude->count + give_up_after - at - 1);
	}
}

#undef INSN

/* Whether bpf_get_current_task_btf and bpf_task_pt_regs serve raw
 * tracepoint programs here (kernel BTF, 5.15): asked once. */
static bool syscall_btf_helpers(void)
{
	static int known = -1;

	if (known < 0)
		known = feature_has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_task_pt_regs) &&
			feature_has_helper(BPF_PROG_TYPE_RAW_TRACEPOINT,
					   BPF_FUNC_get_current_task_btf);
	return known;
}

/* probe_group.guard: the dispatcher's prelude at the head of each point's
 * program, with the block's points as its bitmap; an event it lets through
 * goes on into the program with the context back in r1. So one program
 * that serves all the group's points can sit on raw_syscalls itself. */
static int syscall_guard(const struct probe_group *base, int members_map, struct bpf_insn *insns)
{
	const struct syscall_group *group = (const struct syscall_group *)base;
	struct syscall_prelude prelude;
	/* after the prelude: r1 = ctx; goto program; give up: return 0 */
	const struct bpf_insn tail[4] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_6 },
		{ .code = BPF_JMP | BPF_JA, .off = 2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	syscall_prelude_build(&prelude, group->is_exit, syscall_btf_helpers(), members_map, 2);
	memcpy(insns, prelude.insns, sizeof(*insns) * (size_t)prelude.count);
	memcpy(insns + prelude.count, tail, sizeof(tail));
	return prelude.count + 4;
}

/* With kernel BTF (bpf_task_pt_regs, 5.15) the registers are read by
 * plain loads; without, by bpf_probe_read_kernel. */
static int syscall_dispatcher_load(int map_fd, int bitmap_fd, bool is_exit)
{
	const char *name = is_exit ? "sonde_sys_exit" : "sonde_sys_enter";
	struct syscall_prelude prelude;
	int fd;

	syscall_prelude_build(&prelude, is_exit, true, bitmap_fd, PROBE_DISPATCH_RETURN);
	fd = probe_dispatcher_load(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, name, prelude.insns,
				   prelude.count, map_fd);
	if (fd >= 0)
		return fd;
	syscall_prelude_build(&prelude, is_exit, false, bitmap_fd, PROBE_DISPATCH_RETURN);
	return probe_dispatcher_load(BPF_PROG_TYPE_RAW_TRACEPOINT, 0, name, prelude.insns,
				     prelude.count, map_fd);
}

/* The program array, the dispatcher and its raw tracepoint; their fds go
 * onto fds (the link keeps the dispatcher attached, the array's fd keeps
 * the slots filled: the kernel empties a program array when no process
 * holds it any more). */
static int syscall_group_attach(struct syscall_group *group, fd_list *fds, char **error)
{
	const char *tracepoint = group->is_exit ? "sys_exit" : "sys_enter";
	const char *name = group->is_exit ? "sonde_sys_exit" : "sonde_sys_enter";
	uint32_t zero = 0;
	int map_fd, bitmap_fd, prog_fd, link_fd, err;

	map_fd = probe_dispatch_array_create(name, SYSCALL_SLOTS);
	if (map_fd < 0) {
		*error = xasprintf("cannot create the syscall program array: %s", strerror(-map_fd));
		return map_fd;
	}
	bitmap_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, 4, sizeof(group->traced), 1, NULL);
	if (bitmap_fd < 0 || bpf_map_update_elem(bitmap_fd, &zero, group->traced, BPF_ANY) != 0) {
		err = errno;
		if (bitmap_fd >= 0)
			close(bitmap_fd);
		close(map_fd);
		*error = xasprintf("cannot create the syscall bitmap: %s", strerror(err));
		return -err;
	}
	prog_fd = syscall_dispatcher_load(map_fd, bitmap_fd, group->is_exit);
	if (prog_fd < 0) {
		close(bitmap_fd);
		close(map_fd);
		*error = xasprintf("cannot load the raw_syscalls:%s dispatcher: %s", tracepoint,
				   strerror(-prog_fd));
		return prog_fd;
	}
	link_fd = bpf_raw_tracepoint_open(tracepoint, prog_fd);
	if (link_fd < 0) {
		err = errno;
		close(prog_fd);
		close(bitmap_fd);
		close(map_fd);
		*error = xasprintf("cannot attach to raw_syscalls:%s: %s", tracepoint, strerror(err));
		return -err;
	}
	vec_push(fds, map_fd);
	vec_push(fds, bitmap_fd);
	vec_push(fds, prog_fd);
	vec_push(fds, link_fd);
	group->map_fd = map_fd;
	return 0;
}

static int syscall_tracepoint_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
				     char **error)
{
	struct syscall_group *group = (struct syscall_group *)point->group;
	uint32_t key = (uint32_t)point->syscall_number;
	int err;

	if (group->base.one_program) {
		/* every point's program is this one, guarded: no dispatcher */
		const char *tracepoint = group->is_exit ? "sys_exit" : "sys_enter";

		if (group->link_fd >= 0)
			return 0;
		group->link_fd = bpf_raw_tracepoint_open(tracepoint, prog_fd);
		if (group->link_fd < 0) {
			err = errno;
			*error = xasprintf("cannot attach to raw_syscalls:%s: %s", tracepoint,
					   strerror(err));
			return -err;
		}
		vec_push(fds, group->link_fd);
		return 0;
	}
	if (group->map_fd < 0) {
		err = syscall_group_attach(group, fds, error);
		if (err)
			return err;
	}
	if (bpf_map_update_elem(group->map_fd, &key, &prog_fd, BPF_ANY) != 0) {
		err = errno;
		*error = xasprintf("cannot attach %s through raw_syscalls: %s", point->name,
				   strerror(err));
		return -err;
	}
	return 0;
}

/* Not in the provider table: tracepoint.c hands its points over. */
const struct provider syscall_tracepoint_provider = {
	.name = "tracepoint",
	.aliases = { NULL },
	.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT,
	.describe = syscall_tracepoint_describe,
	.attach = syscall_tracepoint_attach,
	.list = probe_list_nothing,
};
