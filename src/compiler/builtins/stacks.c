/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Stacks and symbols: kernel and user stack traces taken in the kernel,
 * addresses resolved to symbols in user space, and symbols of the traced object resolved to
 * addresses (uaddr).
 */
#include "family.h"

#include "../../kernel/elf.h"

/* kstack / ustack / kstack(mode) / kstack(depth) / kstack(mode, depth) */
static void check_stack(struct sema *sema, struct node *call, bool is_user)
{
	struct type *type = type_new(TYPE_STACK);
	type->size = sizeof(struct stack_value);
	type->is_user_pointer = is_user;
	type->stack_depth = 127;
	static const char *const modes[] = { "bpftrace", "perf", "raw" };
	/* SONDE_STACK_MODE or the config block's stack_mode, checked there */
	type->stack_mode = STACK_MODE_BPFTRACE;
	for (int m = 0; sema->options->stack_mode && m < 3; m++) {
		if (strcmp(sema->options->stack_mode, modes[m]) == 0)
			type->stack_mode = (enum stack_mode)m;
	}
	call->type = type;
	for (struct node *arg = call->args; arg; arg = arg->next) {
		if (arg->kind == NODE_BUILTIN && arg == call->args) {
			bool known = false;
			for (int m = 0; m < 3 && !known; m++) {
				if (strcmp(arg->name, modes[m]) == 0) {
					type->stack_mode = (enum stack_mode)m;
					known = true;
				}
			}
			if (!known)
				sema_error(sema, arg->loc, "unknown stack mode '%s': use bpftrace, perf or raw",
					 arg->name);
			arg->type = type_int(8, false);
			continue;
		}
		sema_check_expr(sema, arg);
		if (!arg->is_constant || !sema_is_int(arg) || arg->const_value < 1 || arg->const_value > 127)
			sema_error(sema, arg->loc, "%s()'s depth must be a constant from 1 to 127", call->name);
		else
			type->stack_depth = (int)arg->const_value;
	}
	if (sema->map_loop_depth)
		sema_error(sema, call->loc, "%s cannot be taken inside a for loop over a map", call->name);
	sema->stack_depths[type->stack_depth] = true;
	if (is_user)
		sema->uses_user_symbols = true;
}

static void check_kstack(struct sema *sema, struct node *call) { check_stack(sema, call, false); }

static void check_ustack(struct sema *sema, struct node *call) { check_stack(sema, call, true); }

/* ksym(addr) / usym(addr): symbolized when printed */
static void check_symbol(struct sema *sema, struct node *call, bool is_user)
{
	sema_check_expr(sema, call->args);
	struct type *type = type_new(TYPE_SYMBOL);
	type->size = sizeof(struct symbol_value);
	type->is_user_pointer = is_user;
	if (is_user)
		sema->uses_user_symbols = true;
	call->type = type;
	if (call->args->type && call->args->type->kind != TYPE_NONE && !sema_is_int(call->args))
		sema_error(sema, call->args->loc, "%s() needs an address, not %s", call->name,
			 type_name(call->args->type));
}

static void check_ksym(struct sema *sema, struct node *call) { check_symbol(sema, call, false); }

static void check_usym(struct sema *sema, struct node *call) { check_symbol(sema, call, true); }

/*
 * A process is named by reading its maps, which must happen while it is
 * alive, not when the stack is printed. So the first time a (pid, name)
 * takes a user stack or symbol, the runtime is sent its pid and reads it at
 * once; the LRU map remembers who was announced, so an event of a known
 * process costs one lookup. The map is updated only once the record is in
 * the ring: a full ring means the next event announces it again.
 */
static void announce_process(struct codegen *gen, int pid)
{
	int key = gen_stack_alloc(gen, sizeof(struct seen_process));
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)key, pid);
	struct helper_arg comm_args[2] = { ARG_STACK(key + 8), ARG_IMM(16) };
	gen_call_helper(gen, BPF_FUNC_get_current_comm, comm_args, 2);
	int known = gen_map_lookup(gen, gen->program->pids_map_id, key);
	int done = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JNE, known, 0, done);

	int record = gen_stack_alloc(gen, 16);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)record, gen->program->process_seen_event);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(record + 8), pid);
	int sent = gen_output_record(gen, ARG_STACK(record), 16);
	ir_jump_if_imm(&gen->fn, BPF_JNE, sent, 0, done);
	int value = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)value, 0);
	struct helper_arg update_args[4] = { ARG_MAP(gen->program->pids_map_id), ARG_STACK(key),
					     ARG_STACK(value), ARG_IMM(BPF_ANY) };
	gen_call_helper(gen, BPF_FUNC_map_update_elem, update_args, 4);
	ir_label(&gen->fn, done);
}

/* User addresses are symbolized in their process: stacks and symbols keep
 * the current pid next to them (0 for kernel ones). */
static void store_symbolizing_pid(struct codegen *gen, int offset, bool is_user)
{
	if (!is_user) {
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)offset, 0);
		return;
	}
	int pid = gen_call_helper(gen, BPF_FUNC_get_current_pid_tgid, NULL, 0);
	ir_alu_imm(&gen->fn, BPF_RSH, pid, 32);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)offset, pid);
	if (gen->program->pids_map_id >= 0)
		announce_process(gen, pid);
}

/* kstack/ustack: the stack is stored in the stack map by the kernel; the
 * value is its id (and, for user stacks, the process to symbolize in). */
static struct value generate_stack(struct codegen *gen, struct node *call, bool is_user)
{
	int slot = gen_stack_alloc(gen, sizeof(struct stack_value));
	struct helper_arg args[3] = { ARG_REG(gen->ctx_reg), ARG_MAP(program_stack_map(gen->program, call->type->stack_depth)),
				      ARG_IMM(is_user ? BPF_F_USER_STACK : 0) };
	int id = gen_call_helper(gen, BPF_FUNC_get_stackid, args, 3);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)slot, id);
	/* -EFAULT only says there was no stack of that kind (a user stack in a
	 * kernel thread, a kernel stack of a sample taken in user mode); any
	 * other error lost a stack, and is counted */
	int stored = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JSGE, id, 0, stored);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, id, -EFAULT, stored);
	gen_count_lost(gen, LOST_SLOT_STACKS);
	ir_label(&gen->fn, stored);
	store_symbolizing_pid(gen, slot + 8, is_user);
	return value_stack(slot, call->type);
}

static struct value generate_kstack(struct codegen *gen, struct node *call)
{
	return generate_stack(gen, call, false);
}

static struct value generate_ustack(struct codegen *gen, struct node *call)
{
	return generate_stack(gen, call, true);
}

static struct value generate_symbol(struct codegen *gen, struct node *call, bool is_user)
{
	int slot = gen_stack_alloc(gen, sizeof(struct symbol_value));
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)slot, gen_value_to_reg(gen, gen_expr(gen, call->args)));
	store_symbolizing_pid(gen, slot + 8, is_user);
	return value_stack(slot, call->type);
}

static struct value generate_ksym(struct codegen *gen, struct node *call)
{
	return generate_symbol(gen, call, false);
}

static struct value generate_usym(struct codegen *gen, struct node *call)
{
	return generate_symbol(gen, call, true);
}

/*
 * uaddr("symbol"): the address of a symbol of the object a uprobe or USDT
 * probe is in, typed as a user pointer to a signed integer of the
 * symbol's size (1, 2 or 4 bytes; 8 for any other), as bpftrace types it.
 * In a fixed-address executable that is the symbol's link-time address. A
 * position-independent object (PIE, shared library) is loaded at an
 * offset chosen at run time, which the probe finds from where it stopped:
 * the symbol is at ip + (symbol - probed instruction), both link-time
 * addresses. A uretprobe stops at the caller's return address, which says
 * nothing of that offset, so there it is refused for such objects.
 */
struct user_symbol {
	uint64_t address;     /* link-time */
	uint64_t size;
	bool relocatable;
	uint64_t probe_address; /* link-time address of the probed instruction (relocatable) */
};

/* 0, or -errno with the reason in *error */
static int user_symbol_find(const struct probe_point *point, const char *name,
			    struct user_symbol *found, char **error)
{
	struct elf_object *object;
	int err = elf_object_open(point->binary_path, &object, error);
	if (err < 0)
		return err;
	struct elf_symbol symbol;
	err = elf_object_find_symbol(object, name, &symbol);
	if (err < 0) {
		*error = xasprintf("uaddr(): no symbol '%s' in %s", name, point->binary_path);
	} else {
		found->address = symbol.address;
		found->size = symbol.size;
		found->relocatable = elf_object_is_relocatable(object);
		if (found->relocatable &&
		    elf_object_offset_to_address(object, point->binary_offset, &found->probe_address) < 0) {
			*error = xasprintf("uaddr(): %s maps no address at the probe's offset 0x%llx",
					   point->binary_path, (unsigned long long)point->binary_offset);
			err = -ENOENT;
		}
		free(symbol.name);
	}
	elf_object_close(object);
	return err;
}

static void check_uaddr(struct sema *sema, struct node *call)
{
	struct node *name = call->args;
	const struct probe_point *point = sema->point;
	call->type = type_pointer(type_int(8, true), true);
	if (name->kind != NODE_STRING) {
		sema_error(sema, name->loc, "uaddr() needs a symbol name as a string literal");
		return;
	}
	if (!point)
		return;
	if (!point->provider->user_space || !point->binary_path) {
		sema_error(sema, call->loc, "uaddr() needs a uprobe, uretprobe or usdt probe, whose object "
			   "holds the symbol, not %s", point->provider->name);
		return;
	}
	struct user_symbol symbol;
	char *error = NULL;
	if (user_symbol_find(point, name->string_value, &symbol, &error) < 0) {
		sema_error(sema, name->loc, "%s", error ? error : "uaddr(): cannot read the object");
		free(error);
		return;
	}
	if (symbol.relocatable && strcmp(point->provider->name, "uretprobe") == 0) {
		sema_error(sema, call->loc, "uaddr() in a uretprobe of a position-independent object "
			   "(%s): where it was loaded is not known on return; use a uprobe", point->binary_path);
		return;
	}
	int size = symbol.size == 1 || symbol.size == 2 || symbol.size == 4 ? (int)symbol.size : 8;
	call->type = type_pointer(type_int(size, true), true);
}

static struct value generate_uaddr(struct codegen *gen, struct node *call)
{
	struct user_symbol symbol = { 0 };
	char *error = NULL;
	if (user_symbol_find(gen->point, call->args->string_value, &symbol, &error) < 0) {
		/* found when checked: the file changed since */
		free(error);
		return value_reg(gen_const_reg(gen, 0), call->type);
	}
	if (!symbol.relocatable)
		return value_reg(gen_const_reg(gen, (int64_t)symbol.address), call->type);
	int address = gen_load_int(gen, gen->ctx_reg, ARCH_INSTRUCTION_POINTER, 8, false);
	int distance = gen_const_reg(gen, (int64_t)(symbol.address - symbol.probe_address));
	ir_alu(&gen->fn, BPF_ADD, address, distance);
	return value_reg(address, call->type);
}

const struct function_def builtins_stacks[] = {
	{ FUNCTION(kstack, 0, 2), .callable_bare = true },
	{ FUNCTION(ustack, 0, 2), .callable_bare = true },
	{ FUNCTION(ksym, 1, 1) },
	{ FUNCTION(usym, 1, 1) },
	{ FUNCTION(uaddr, 1, 1) },
	{ 0 },
};
