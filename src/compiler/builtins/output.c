/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Output: formatted lines, values and maps printed, commands run, the run ended.
 * Each call becomes a ring-buffer event that user space formats (runtime/format.c).
 */
#include "family.h"

static void check_printf(struct sema *sema, struct node *call)
{
	sema_check_format_call(sema, call, call->args, EVENT_PRINTF);
	call->type = type_void();
}

static void check_system(struct sema *sema, struct node *call)
{
	sema_check_format_call(sema, call, call->args, EVENT_SYSTEM);
	call->type = type_void();
}

static void check_cat(struct sema *sema, struct node *call)
{
	sema_check_format_call(sema, call, call->args, EVENT_CAT);
	call->type = type_void();
}

/* print() shows nested structs too, so their fields must be converted
 * (pointers are printed as addresses and not followed). */
static void complete_nested_records(struct type *type, int depth)
{
	if (!type || depth > 8)
		return;
	if (type->kind == TYPE_ARRAY) {
		complete_nested_records(type->pointee, depth + 1);
		return;
	}
	if (type->kind != TYPE_RECORD)
		return;
	if (type->is_incomplete)
		btf_complete_record(type);
	for (int i = 0; i < type->field_count; i++)
		complete_nested_records(type->fields[i].type, depth + 1);
}

static void check_print(struct sema *sema, struct node *call)
{
	struct node *what = call->args;
	call->type = type_void();
	if (what->kind == NODE_MAP && !what->args) {
		struct map_desc *map = sema_map_for(sema, what);
		struct event_desc *event = sema_new_event(sema, call, EVENT_PRINT_MAP);
		event->record_size = 8;
		event->map_id = map->id;
		struct node *top = what->next, *div = top ? top->next : NULL;
		if (top) {
			sema_check_expr(sema, top);
			if (!sema_is_int_constant(top))
				sema_error(sema, top->loc, "print()'s top must be a constant integer");
			else
				event->top = (int)top->const_value;
		}
		if (div) {
			sema_check_expr(sema, div);
			if (!sema_is_int_constant(div))
				sema_error(sema, div->loc, "print()'s div must be a constant integer");
			else
				event->div = (int)div->const_value;
		}
		return;
	}
	if (what->next) {
		sema_error(sema, what->next->loc, "print() of a value takes no further arguments");
		return;
	}
	sema_check_expr(sema, what);
	if (!what->type || what->type->kind == TYPE_NONE)
		return;
	if (what->type->kind == TYPE_RECORD && what->type->is_incomplete)
		btf_complete_record(what->type);
	if (what->type->kind == TYPE_VOID || type_is_aggregation(what->type) ||
	    (what->type->kind == TYPE_RECORD && !what->type->btf_id)) {
		sema_error(sema, what->loc, "print() cannot print %s", type_name(what->type));
		return;
	}
	if (what->type->kind == TYPE_RECORD) {
		complete_nested_records(what->type, 0);
		if (what->type->size > 256) {
			sema_error(sema, what->loc, "%s is %d bytes, too big to print whole (at most 256); "
				 "print its fields", type_name(what->type), what->type->size);
			return;
		}
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_PRINT_VALUE);
	event->record_size = 8;
	sema_event_add_arg(event, what->type, ARG_PLAIN, NULL);
}

static void check_join(struct sema *sema, struct node *call)
{
	sema_check_expr(sema, call->args);
	call->type = type_void();
	if (call->args->next) {
		sema_check_expr(sema, call->args->next);
		if (call->args->next->kind != NODE_STRING) {
			sema_error(sema, call->args->next->loc, "join()'s delimiter must be a string literal");
			return;
		}
	}
	if (call->args->type && call->args->type->kind != TYPE_NONE && !sema_is_int(call->args)) {
		sema_error(sema, call->args->loc, "join() needs a pointer to an array of strings");
		return;
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_JOIN);
	event->format = xstrdup(call->args->next ? call->args->next->string_value : " ");
	event->join_count = 16;
	event->record_size = 8;
	sema_event_add_arg(event, type_string(event->join_count * sema->options->max_strlen), ARG_PLAIN, NULL);
}

static void check_exit(struct sema *sema, struct node *call)
{
	call->type = type_void();
	if (call->args) {
		sema_check_expr(sema, call->args);
		if (call->args->type && call->args->type->kind != TYPE_NONE && !sema_is_int(call->args))
			sema_error(sema, call->args->loc, "exit() needs an integer exit code");
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_EXIT);
	event->record_size = 8;
	sema_event_add_arg(event, type_int(8, true), ARG_PLAIN, NULL);
}

static struct value generate_printf(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, call->args->next);
	return value_none();
}

static struct value generate_system(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, call->args->next);
	return value_none();
}

static struct value generate_cat(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, call->args->next);
	return value_none();
}

static struct value generate_print(struct codegen *gen, struct node *call)
{
	const struct event_desc *event = gen_event_of(gen, call);
	gen_send_event(gen, call, event->kind == EVENT_PRINT_VALUE ? call->args : NULL);
	return value_none();
}

static struct value generate_exit(struct codegen *gen, struct node *call)
{
	const struct event_desc *event = gen_event_of(gen, call);
	int record = gen_stack_alloc(gen, event->record_size);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)record, call->event_id - 1);
	int code = call->args ? gen_value_to_reg(gen, gen_expr(gen, call->args)) : gen_const_reg(gen, 0);
	ir_store(&gen->fn, 8, BPF_REG_10, (int16_t)(record + event->args[0].offset), code);
	/* The request goes to the runtime through a map slot it polls, so a
	 * ring buffer kept full by a flood cannot swallow it; this CPU's first
	 * exit() wins. The ring record is still sent: where it lands, the
	 * runtime stops printing what follows it (as bpftrace does). It is
	 * not counted as lost when it does not fit: it is no data. */
	int key = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, LOST_SLOT_EXIT);
	int slot = gen_map_lookup(gen, gen->program->lost_map_id, key);
	int requested = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, slot, 0, requested);
	int previous = ir_new_vreg(&gen->fn);
	ir_load(&gen->fn, 8, previous, slot, 0);
	ir_jump_if_imm(&gen->fn, BPF_JNE, previous, 0, requested);
	int request = ir_new_vreg(&gen->fn);
	ir_mov(&gen->fn, request, code);
	ir_alu_imm(&gen->fn, BPF_LSH, request, 1);
	ir_alu_imm(&gen->fn, BPF_OR, request, 1);
	ir_store(&gen->fn, 8, slot, 0, request);
	ir_label(&gen->fn, requested);
	gen_output_record(gen, ARG_STACK(record), event->record_size);
	/* like bpftrace, nothing after exit() runs in this probe */
	ir_jump(&gen->fn, gen->exit_label);
	return value_none();
}

/* join(argv[, delimiter]): up to join_count strings from a NULL-terminated
 * array of string pointers. The record (over 1 KiB) is built in the per-CPU
 * scratch buffer rather than on the stack; each slot starts empty so a short
 * argv leaves nothing from an earlier event behind. */
static struct value generate_join(struct codegen *gen, struct node *call)
{
	const struct event_desc *event = gen_event_of(gen, call);
	const struct event_arg *arg = &event->args[0];
	int slot_size = arg->type->size / event->join_count;
	bool is_pointer = call->args->type->kind == TYPE_POINTER;
	bool is_user = is_pointer && call->args->type->is_user_pointer;
	int read_helper = !is_pointer ? BPF_FUNC_probe_read : is_user ? BPF_FUNC_probe_read_user
									  : BPF_FUNC_probe_read_kernel;
	int read_str_helper = !is_pointer ? BPF_FUNC_probe_read_str
				: is_user ? BPF_FUNC_probe_read_user_str : BPF_FUNC_probe_read_kernel_str;
	int array = gen_value_to_reg(gen, gen_expr(gen, call->args));
	int key = gen_stack_alloc(gen, 8);
	ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)key, 0);
	int record = gen_map_lookup(gen, gen->program->scratch_map_id, key);
	int done = ir_new_label(&gen->fn), send = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, record, 0, done);
	int index = gen_const_reg(gen, call->event_id - 1);
	ir_store(&gen->fn, 8, record, 0, index);
	for (int i = 0; i < event->join_count; i++)
		ir_store_imm(&gen->fn, 1, record, (int16_t)(arg->offset + i * slot_size), 0);
	int element = gen_stack_alloc(gen, 8);
	for (int i = 0; i < event->join_count; i++) {
		ir_store_imm(&gen->fn, 8, BPF_REG_10, (int16_t)element, 0);
		int source = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, source, array);
		ir_alu_imm(&gen->fn, BPF_ADD, source, i * 8);
		struct helper_arg read[3] = { ARG_STACK(element), ARG_IMM(8), ARG_REG(source) };
		gen_call_helper(gen, read_helper, read, 3);
		int string = gen_load_int(gen, BPF_REG_10, element, 8, false);
		ir_jump_if_imm(&gen->fn, BPF_JEQ, string, 0, send);
		int slot = ir_new_vreg(&gen->fn);
		ir_mov(&gen->fn, slot, record);
		ir_alu_imm(&gen->fn, BPF_ADD, slot, arg->offset + i * slot_size);
		struct helper_arg copy[3] = { ARG_REG(slot), ARG_IMM(slot_size), ARG_REG(string) };
		gen_call_helper(gen, read_str_helper, copy, 3);
	}
	ir_label(&gen->fn, send);
	gen_send_record(gen, ARG_REG(record), event->record_size);
	ir_label(&gen->fn, done);
	return value_none();
}

const struct function_def builtins_output[] = {
	{ FUNCTION(printf, 1, -1), .joins_lines = true },
	{ FUNCTION(print, 1, 3) },
	{ FUNCTION(cat, 1, -1) },
	{ FUNCTION(system, 1, -1), .needs_unsafe = true },
	{ FUNCTION(exit, 0, 1) },
	{ FUNCTION(join, 1, 2) },
	{ 0 },
};
