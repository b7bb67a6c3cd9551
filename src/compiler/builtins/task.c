/*
 * Builtin variables, family: the current task. pid, tid, uid, gid, comm,
 * cgroup, curtask, and cpid (the child of -c CMD).
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
	{ .name = "uid", .check = builtin_check_u64, .generate = generate_uid, .is_stable = true },
	{ .name = "gid", .check = builtin_check_u64, .generate = generate_gid, .is_stable = true },
	{ VARIABLE(comm) },
	{ .name = "cgroup", .check = builtin_check_u64, .generate = generate_cgroup, .is_stable = true },
	{ .name = "curtask", .check = builtin_check_u64, .generate = generate_curtask,
	  .points_to = task_struct_pointer },
	{ VARIABLE(cpid) },
	{ 0 },
};
