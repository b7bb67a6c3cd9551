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
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/names.h"
#include "../kernel/tracefs.h"

extern const struct provider syscall_tracepoint_provider;

/* From this many syscall tracepoints in one probe spec on, they go through
 * raw_syscalls. The dispatcher runs for every syscall of the machine, which
 * is no cost when most of them are traced and some when few are: with only
 * sys_enter_write { @ = count(); }, 500,000 writes cost 82 ns each as a
 * perf tracepoint and 151 ns through the dispatcher (reading the saved
 * registers is most of it). A few slow detaches are hidden by run.c's
 * background release anyway. */
#define SYSCALL_DISPATCH_MIN 16

/* Room for every x86-64 syscall number, with space for new ones. */
#define SYSCALL_SLOTS 1024

/* __USER_CS: the code segment of 64-bit user code on x86-64 */
#define USER64_CODE_SEGMENT 0x33

/* x86-64 syscall arguments 0..5 in the saved registers (r10, not cx: the
 * syscall instruction clobbers cx). */
static const int syscall_registers[] = {
	PT_REGS_DI, PT_REGS_SI, PT_REGS_DX, PT_REGS_R10, PT_REGS_R8, PT_REGS_R9,
};

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
};

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

/* SONDE_SYSCALL_TRACEPOINTS=raw|perf overrides the choice (tests use it to
 * run one path on a few syscalls). */
bool syscall_tracepoint_dispatch_wanted(int syscall_points)
{
	const char *choice = getenv("SONDE_SYSCALL_TRACEPOINTS");

	if (choice && strcmp(choice, "raw") == 0)
		return true;
	if (choice && strcmp(choice, "perf") == 0)
		return false;
	return syscall_points >= SYSCALL_DISPATCH_MIN;
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
		*group = &created->base;
	}
	name = xasprintf("tracepoint:syscalls:%s", event);
	point = probe_point_new(&syscall_tracepoint_provider, name);
	free(name);
	point->target = xstrdup("syscalls");
	point->function = xstrdup(event);
	point->args_access = ARGS_LOCATED_RECORD;
	point->syscall_number = number;
	point->group = *group;
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
			location->register_offset = PT_REGS_ORIG_AX;
		} else if (offset == 8 || (group->is_exit && offset == 16)) {
			/* enter: the context's id; exit: the context's ret */
			location->kind = ARG_LOCATION_REGISTER;
			location->register_offset = 8;
		} else if (!group->is_exit && offset >= 16 && offset % 8 == 0 && slot < 6) {
			location->kind = ARG_LOCATION_SAVED_REGISTER;
			location->register_offset = syscall_registers[slot];
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

/* The dispatcher's prelude: syscalls of 64-bit code go to the slot of their
 * number. */
#define SYSCALL_PRELUDE_INSNS 11
#define SYSCALL_GIVE_UP(at) (SYSCALL_PRELUDE_INSNS + PROBE_DISPATCH_RETURN - (at) - 1)

static int syscall_dispatcher_load(int map_fd, bool is_exit)
{
	/* bpf_probe_read_kernel(fp - 24, 24, regs + orig_ax): orig_ax, ip, cs */
	const struct bpf_insn prelude[SYSCALL_PRELUDE_INSNS] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1 },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_1 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3, .imm = PT_REGS_ORIG_AX },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -24 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 24 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_read_kernel },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = SYSCALL_GIVE_UP(7) },
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_10,
		  .off = -8 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_1, .off = SYSCALL_GIVE_UP(9),
		  .imm = USER64_CODE_SEGMENT },
		/* enter: the context's id; exit: the saved orig_ax */
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_3,
		  .src_reg = is_exit ? BPF_REG_10 : BPF_REG_6, .off = is_exit ? -24 : 8 },
	};

	return probe_dispatcher_load(BPF_PROG_TYPE_RAW_TRACEPOINT, 0,
				     is_exit ? "sonde_sys_exit" : "sonde_sys_enter", prelude,
				     SYSCALL_PRELUDE_INSNS, map_fd);
}

/* The program array, the dispatcher and its raw tracepoint; their fds go
 * onto fds (the link keeps the dispatcher attached, the array's fd keeps
 * the slots filled: the kernel empties a program array when no process
 * holds it any more). */
static int syscall_group_attach(struct syscall_group *group, fd_list *fds, char **error)
{
	const char *tracepoint = group->is_exit ? "sys_exit" : "sys_enter";
	int map_fd, prog_fd, link_fd;

	map_fd = probe_dispatch_array_create(group->is_exit ? "sonde_sys_exit" : "sonde_sys_enter",
					     SYSCALL_SLOTS);
	if (map_fd < 0) {
		*error = xasprintf("cannot create the syscall program array: %s", strerror(-map_fd));
		return map_fd;
	}
	prog_fd = syscall_dispatcher_load(map_fd, group->is_exit);
	if (prog_fd < 0) {
		close(map_fd);
		*error = xasprintf("cannot load the raw_syscalls:%s dispatcher: %s", tracepoint,
				   strerror(-prog_fd));
		return prog_fd;
	}
	link_fd = bpf_raw_tracepoint_open(tracepoint, prog_fd);
	if (link_fd < 0) {
		int err = errno;

		close(prog_fd);
		close(map_fd);
		*error = xasprintf("cannot attach to raw_syscalls:%s: %s", tracepoint, strerror(err));
		return -err;
	}
	vec_push(fds, map_fd);
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
