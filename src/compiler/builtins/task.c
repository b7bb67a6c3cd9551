/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin variables, family: the current task. pid, tid, ppid, uid, gid,
 * username, comm, cgroup, curtask, and cpid (the child of -c CMD).
 */
#include "family.h"

/* pid_tgid read once in the prologue when the block reads it more than once */
static int pid_tgid(struct codegen *gen)
{
	if (gen->pid_tgid_reg < 0 || gen->in_callback)
		return gen_helper_value(gen, BPF_FUNC_get_current_pid_tgid);
	int reg = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, reg, gen->pid_tgid_reg);
	return reg;
}

static void high_half(struct codegen *gen, int reg)
{
	ir_alu_imm(&gen->fn, BPF_RSH, reg, 32);
}

static void low_half(struct codegen *gen, int reg)
{
	ir_alu_imm(&gen->fn, BPF_LSH, reg, 32);
	ir_alu_imm(&gen->fn, BPF_RSH, reg, 32);
}

static struct value generate_pid(struct codegen *gen, struct node *node)
{
	int reg = pid_tgid(gen);
	high_half(gen, reg);
	return value_reg(reg, node->type);
}

static struct value generate_tid(struct codegen *gen, struct node *node)
{
	int reg = pid_tgid(gen);
	low_half(gen, reg);
	return value_reg(reg, node->type);
}

static struct value generate_uid(struct codegen *gen, struct node *node)
{
	int reg = gen_helper_value(gen, BPF_FUNC_get_current_uid_gid);
	low_half(gen, reg);
	return value_reg(reg, node->type);
}

static struct value generate_gid(struct codegen *gen, struct node *node)
{
	int reg = gen_helper_value(gen, BPF_FUNC_get_current_uid_gid);
	high_half(gen, reg);
	return value_reg(reg, node->type);
}

static void check_comm(struct sema *sema, struct node *node)
{
	node->type = type_string(16);
}

static struct value generate_comm(struct codegen *gen, struct node *node)
{
	/* zeroed first: kernels before 6.x do not pad the name with NULs,
	 * and bytes after the NUL would make equal names different keys */
	int offset = gen_stack_alloc(gen, 16);
	gen_zero_stack(gen, offset, 16);
	struct helper_arg args[2] = { ARG_STACK(offset), ARG_IMM(16) };
	gen_call_helper(gen, BPF_FUNC_get_current_comm, args, 2);
	return value_stack(offset, node->type);
}

static struct value generate_cgroup(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_get_current_cgroup_id), node->type);
}

static struct value generate_curtask(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_get_current_task), node->type);
}

/* `curtask` is an integer for printing, but curtask->field reads the
 * current task_struct, as in bpftrace. */
static struct type *task_struct_pointer(void)
{
	struct type *task = btf_available() ? btf_type_by_name("struct task_struct") : NULL;
	return task ? type_pointer(task, false) : NULL;
}

/* The offset of a member of struct task_struct from BTF, or -1. */
static int task_member_offset(const char *name, int *size)
{
	struct type *task = btf_available() ? btf_type_by_name("struct task_struct") : NULL;
	btf_complete_record(task);
	for (int i = 0; task && task->kind == TYPE_RECORD && i < task->field_count; i++) {
		if (task->fields[i].name && strcmp(task->fields[i].name, name) == 0) {
			*size = task->fields[i].type ? task->fields[i].type->size : 0;
			return task->fields[i].offset;
		}
	}
	return -1;
}

/* ppid: curtask->real_parent->tgid, as current bpftrace defines it */
static void check_ppid(struct sema *sema, struct node *node)
{
	int size;
	node->type = type_int(8, false);
	if (task_member_offset("real_parent", &size) < 0 || task_member_offset("tgid", &size) < 0)
		sema_error(sema, node->loc, "ppid needs the kernel's BTF (struct task_struct's "
			   "real_parent and tgid)");
}

/* *(size *)(address + offset) in kernel memory, zero when unreadable */
static int read_kernel_member(struct codegen *gen, int address, int offset, int size)
{
	int slot = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)slot, 0);
	ir_alu_imm(&gen->fn, BPF_ADD, address, offset);
	struct helper_arg args[3] = { ARG_STACK(slot), ARG_IMM(size), ARG_REG(address) };
	gen_call_helper(gen, BPF_FUNC_probe_read_kernel, args, 3);
	return gen_load_int(gen, BPF_REG_10, slot, size, false);
}

static struct value generate_ppid(struct codegen *gen, struct node *node)
{
	int parent_size, tgid_size;
	int parent_offset = task_member_offset("real_parent", &parent_size);
	int tgid_offset = task_member_offset("tgid", &tgid_size);
	int task = gen_helper_value(gen, BPF_FUNC_get_current_task);
	int parent = read_kernel_member(gen, task, parent_offset, 8);
	return value_reg(read_kernel_member(gen, parent, tgid_offset, tgid_size), node->type);
}

/* username: the uid, named when printed (common/names.c) */
static void check_username(struct sema *sema, struct node *node)
{
	node->type = type_named_int(&int_names_username);
}

static void check_cpid(struct sema *sema, struct node *node)
{
	if (!sema->options->child_pid) {
		sema_error(sema, node->loc, "cpid is only available with -c CMD");
		node->type = type_none();
		return;
	}
	node->type = type_int(8, false);
}

static struct value generate_cpid(struct codegen *gen, struct node *node)
{
	return value_reg(gen_const_reg(gen, gen->sema->options->child_pid), node->type);
}

const struct variable_def variables_task[] = {
	{ .name = "pid", .check = builtin_check_u64, .generate = generate_pid, .reads_pid_tgid = true,
	  .is_stable = true },
	{ .name = "tid", .check = builtin_check_u64, .generate = generate_tid, .reads_pid_tgid = true,
	  .is_stable = true },
	{ VARIABLE(ppid), .is_stable = true },
	{ .name = "uid", .check = builtin_check_u64, .generate = generate_uid, .is_stable = true },
	{ .name = "username", .check = check_username, .generate = generate_uid, .is_stable = true },
	{ .name = "gid", .check = builtin_check_u64, .generate = generate_gid, .is_stable = true },
	{ VARIABLE(comm) },
	{ .name = "cgroup", .check = builtin_check_u64, .generate = generate_cgroup, .is_stable = true },
	{ .name = "curtask", .check = builtin_check_u64, .generate = generate_curtask,
	  .points_to = task_struct_pointer },
	{ VARIABLE(cpid) },
	{ 0 },
};
