/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Kernel: kernel symbol addresses (per-CPU ones too), which address
 * space an address belongs to (kptr, uptr), cgroup ids of paths, signals sent to the current process,
 * integers the kernel numbers (syscalls, signals, errnos, softirqs, cgroups) printed as names or
 * text, and the number of CPUs.
 */
#include "family.h"

#include "../../kernel/cgroup.h"

static void check_signal(struct sema *sema, struct node *call)
{
	sema_check_expr(sema, call->args);
	call->type = type_void();
	if (call->args->kind == NODE_STRING) {
		const char *name = call->args->string_value;
		int number = signal_number_of(name);
		if (number > 0) {
			call->args->kind = NODE_INT;
			call->args->int_value = (uint64_t)number;
			call->args->const_value = (uint64_t)number;
			call->args->is_constant = true;
			call->args->type = type_int(8, true);
			return;
		}
		sema_error(sema, call->args->loc, "unknown signal '%s'", name);
		return;
	}
	if (call->args->type && call->args->type->kind != TYPE_NONE && !sema_is_int(call->args))
		sema_error(sema, call->args->loc, "signal() needs a signal number or name");
}

/* kaddr("symbol"): the symbol's kernel address, resolved at compile time */
static void check_kaddr(struct sema *sema, struct node *call)
{
	struct node *symbol = call->args;
	call->type = type_int(8, false);
	if (symbol->kind != NODE_STRING) {
		sema_error(sema, symbol->loc, "kaddr() needs a symbol name as a string literal");
		return;
	}
	unsigned long long address = 0;
	if (kallsyms_lookup(symbol->string_value, &address) < 0 || address == 0) {
		sema_error(sema, symbol->loc, "kernel symbol '%s' not found in /proc/kallsyms",
			 symbol->string_value);
		return;
	}
	call->is_constant = true;
	call->const_value = address;
}

/* cgroupid("/sys/fs/cgroup/..."): the id of that cgroup v2 directory, which
 * `cgroup` gives for a task inside it, resolved at compile time */
static void check_cgroupid(struct sema *sema, struct node *call)
{
	struct node *path = call->args;
	call->type = type_int(8, false);
	if (path->kind != NODE_STRING) {
		sema_error(sema, path->loc, "cgroupid() needs a path as a string literal");
		return;
	}
	uint64_t id = 0;
	int found = cgroup_id_of_path(path->string_value, &id);
	if (found < 0) {
		sema_error(sema, path->loc, "cgroupid(): '%s' is not a cgroup v2 directory (%s)",
			   path->string_value,
			   found == -EMEDIUMTYPE ? "not on a cgroup2 file system" : strerror(-found));
		return;
	}
	call->is_constant = true;
	call->const_value = id;
}

/* kptr(x) and uptr(x): x, marked as an address in the kernel's or in the
 * traced process's memory, so that what reads through it (fields, *p, str,
 * buf, macaddr) uses probe_read_kernel or probe_read_user. A pointer gets a
 * pointer type of that space; an integer stays an integer (it prints as a
 * number, as in bpftrace), marked when it is a user address. */
static void check_address_space(struct sema *sema, struct node *call, bool is_user)
{
	struct node *arg = call->args;
	sema_check_expr(sema, arg);
	call->type = type_none();
	struct type *type = arg->type;
	if (!type || type->kind == TYPE_NONE)
		return;
	if (type->kind == TYPE_POINTER) {
		call->type = type_pointer(type->pointee, is_user);
	} else if (type->kind == TYPE_INT) {
		struct type *marked = type_new(TYPE_INT);
		*marked = *type;
		marked->is_user_pointer = is_user;
		call->type = marked;
	} else {
		sema_error(sema, arg->loc, "%s() needs an integer or a pointer, not %s", call->name,
			   type_name(type));
	}
}

static void check_kptr(struct sema *sema, struct node *call) { check_address_space(sema, call, false); }

static void check_uptr(struct sema *sema, struct node *call) { check_address_space(sema, call, true); }

/* syscall_name(n) and friends: the integer itself, typed to print as a name. */
static void check_named_int(struct sema *sema, struct node *call, const struct int_names *names)
{
	struct node *arg = call->args;
	sema_check_expr(sema, arg);
	call->type = type_none();
	if (!arg->type || arg->type->kind == TYPE_NONE)
		return;
	if (arg->type->kind != TYPE_INT) {
		sema_error(sema, arg->loc, "%s() needs an integer, not %s", call->name, type_name(arg->type));
		return;
	}
	call->type = type_named_int(names);
}

static void check_syscall_name(struct sema *sema, struct node *call) { check_named_int(sema, call, &int_names_syscall); }

static void check_signal_name(struct sema *sema, struct node *call) { check_named_int(sema, call, &int_names_signal); }

static void check_errno_name(struct sema *sema, struct node *call) { check_named_int(sema, call, &int_names_errno); }

static void check_softirq_name(struct sema *sema, struct node *call) { check_named_int(sema, call, &int_names_softirq); }

/* strerror(e): the error's message, as bpftrace prints it (strerror(3)) */
static void check_strerror(struct sema *sema, struct node *call) { check_named_int(sema, call, &int_names_strerror); }

/* The names of cgroup_path(id, "pattern"), one per pattern, so that equal
 * calls have equal types (types compare their names by address). Never
 * freed, as types are not. */
static const struct int_names *cgroup_path_filtered(const char *pattern)
{
	static VEC(struct int_names *) filters;
	for (int i = 0; i < filters.count; i++)
		if (strcmp(filters.items[i]->pattern, pattern) == 0)
			return filters.items[i];
	struct int_names *filtered = xmalloc(sizeof(*filtered));
	*filtered = int_names_cgroup_path;
	filtered->pattern = xstrdup(pattern);
	vec_push(&filters, filtered);
	return filtered;
}

/* cgroup_path(id[, "pattern"]): the id, whose path is looked up when printed */
static void check_cgroup_path(struct sema *sema, struct node *call)
{
	check_named_int(sema, call, &int_names_cgroup_path);
	struct node *pattern = call->args->next;
	if (!pattern)
		return;
	if (pattern->kind != NODE_STRING) {
		sema_error(sema, pattern->loc, "cgroup_path()'s filter must be a string literal "
			   "(a wildcard pattern over hierarchy names, like \"unified\")");
		return;
	}
	if (call->type->kind != TYPE_INT)
		return;
	call->type = type_named_int(cgroup_path_filtered(pattern->string_value));
}

static struct value generate_signal(struct codegen *gen, struct node *call)
{
	int signal = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct helper_arg args[1] = { ARG_REG(signal) };
	gen_call_helper(gen, BPF_FUNC_send_signal, args, 1);
	return value_none();
}

/* percpu_kaddr("sym"[, cpu]): the address of this CPU's (or that CPU's)
 * copy of a per-CPU kernel variable, found in the kernel's BTF; 0 for a
 * CPU that does not exist */
static void check_percpu_kaddr(struct sema *sema, struct node *call)
{
	struct node *symbol = call->args, *cpu = symbol->next;
	call->type = type_pointer(type_int(8, false), false);
	if (cpu) {
		sema_check_expr(sema, cpu);
		if (cpu->type && cpu->type->kind != TYPE_NONE && !sema_is_int(cpu))
			sema_error(sema, cpu->loc, "percpu_kaddr()'s CPU must be an integer, not %s",
				   type_name(cpu->type));
	}
	if (symbol->kind != NODE_STRING) {
		sema_error(sema, symbol->loc, "percpu_kaddr() needs a symbol name as a string literal");
		return;
	}
	int size;
	unsigned long long address;
	if (btf_percpu_var_id(symbol->string_value, &size) < 0)
		sema_error(sema, symbol->loc, "no per-CPU kernel variable '%s' in the kernel's BTF",
			   symbol->string_value);
	else if (kallsyms_lookup(symbol->string_value, &address) < 0)
		/* the verifier finds the variable through kallsyms */
		sema_error(sema, symbol->loc, "the kernel does not list '%s' in /proc/kallsyms (built "
			   "without CONFIG_KALLSYMS_ALL), so BPF cannot reach it", symbol->string_value);
}

static struct value generate_percpu_kaddr(struct codegen *gen, struct node *call)
{
	int size;
	int variable = ir_new_vreg(&gen->fn);
	ir_ld_btf_var(&gen->fn, variable, btf_percpu_var_id(call->args->string_value, &size));
	if (!call->args->next) {
		struct helper_arg args[1] = { ARG_REG(variable) };
		return value_reg(gen_call_helper(gen, BPF_FUNC_this_cpu_ptr, args, 1), call->type);
	}
	int cpu = gen_value_to_reg(gen, gen_expr(gen, call->args->next));
	struct helper_arg args[2] = { ARG_REG(variable), ARG_REG(cpu) };
	return value_reg(gen_call_helper(gen, BPF_FUNC_per_cpu_ptr, args, 2), call->type);
}

/* kaddr() and cgroupid(): the value found at compile time */
static struct value generate_constant(struct codegen *gen, struct node *call)
{
	return value_reg(gen_const_reg(gen, (int64_t)call->const_value), call->type);
}

/* syscall_name(n) and friends: n widened to 64 bits; only the type differs. */
static struct value generate_named_int(struct codegen *gen, struct node *call)
{
	struct value arg = gen_expr(gen, call->args);
	int reg = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, reg, gen_value_to_reg(gen, arg));
	gen_convert_int(gen, reg, call->args->type);
	return value_reg(reg, call->type);
}

static struct value generate_syscall_name(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_signal_name(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_errno_name(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_softirq_name(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_strerror(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_cgroup_path(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_kptr(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

static struct value generate_uptr(struct codegen *gen, struct node *call) { return generate_named_int(gen, call); }

/* ncpus: the CPUs the kernel could bring up (possible CPUs), fixed at compile time */
static struct value generate_ncpus(struct codegen *gen, struct node *node)
{
	int count = libbpf_num_possible_cpus();
	return value_reg(gen_const_reg(gen, count > 0 ? count : 1), node->type);
}

static struct value generate_cpu(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_get_smp_processor_id), node->type);
}

static struct value generate_numaid(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_get_numa_node_id), node->type);
}

static struct value generate_rand(struct codegen *gen, struct node *node)
{
	return value_reg(gen_helper_value(gen, BPF_FUNC_get_prandom_u32), node->type);
}

const struct variable_def variables_kernel[] = {
	{ .name = "cpu", .check = builtin_check_u64, .generate = generate_cpu, .is_stable = true },
	{ .name = "numaid", .check = builtin_check_u64, .generate = generate_numaid },
	{ .name = "rand", .check = builtin_check_u64, .generate = generate_rand },
	{ .name = "ncpus", .check = builtin_check_u64, .generate = generate_ncpus, .is_stable = true },
	{ 0 },
};

const struct function_def builtins_kernel[] = {
	{ .name = "kaddr", .min_args = 1, .max_args = 1, .check = check_kaddr,
	  .generate = generate_constant },
	{ FUNCTION(kptr, 1, 1) },
	{ FUNCTION(uptr, 1, 1) },
	{ FUNCTION(percpu_kaddr, 1, 2) },
	{ FUNCTION(signal, 1, 1), .needs_unsafe = true },
	{ FUNCTION(syscall_name, 1, 1) },
	{ FUNCTION(signal_name, 1, 1) },
	{ FUNCTION(errno_name, 1, 1) },
	{ FUNCTION(softirq_name, 1, 1) },
	{ FUNCTION(strerror, 1, 1) },
	{ FUNCTION(cgroup_path, 1, 2) },
	{ .name = "cgroupid", .min_args = 1, .max_args = 1, .check = check_cgroupid,
	  .generate = generate_constant },
	{ 0 },
};
