/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Maps as a whole or one element: delete, clear, zero, has_key, len;
 * pinned_has_key, an element of a map pinned by someone else.
 */
#include "family.h"

/* delete(@m[k]), delete(@m, k) (rewritten to the first by desugar()) or
 * delete(@scalar): true when there was an element to delete, as in
 * current bpftrace */
static void check_delete(struct sema *sema, struct node *call)
{
	struct node *map = call->args;
	call->type = type_int(8, false);
	if (map->kind != NODE_MAP) {
		sema_error(sema, map->loc, "delete() needs a map element: delete(@m[key]), delete(@m, key) "
			   "or delete(@scalar)");
		return;
	}
	sema_check_map_access(sema, map);
}

static void check_whole_map(struct sema *sema, struct node *call)
{
	struct node *map = call->args;
	call->type = type_void();
	if (map->kind != NODE_MAP || map->args) {
		sema_error(sema, map->loc, "%s() needs a whole map, like %s(@m)", call->name, call->name);
		return;
	}
	sema_map_for(sema, map);
}

static void check_clear(struct sema *sema, struct node *call)
{
	check_whole_map(sema, call);
	if (call->args->kind != NODE_MAP || call->args->args)
		return;
	struct event_desc *event = sema_new_event(sema, call, EVENT_CLEAR_MAP);
	event->record_size = 8;
	event->map_id = call->args->map_id;
}

static void check_zero(struct sema *sema, struct node *call)
{
	check_whole_map(sema, call);
	if (call->args->kind != NODE_MAP || call->args->args)
		return;
	struct event_desc *event = sema_new_event(sema, call, EVENT_ZERO_MAP);
	event->record_size = 8;
	event->map_id = call->args->map_id;
}

static void check_len(struct sema *sema, struct node *call)
{
	check_whole_map(sema, call);
	call->type = type_int(8, true);
}

/* has_key(@m, k1[, k2...]), rewritten to has_key(@m[k1, ...]) by desugar() */
static void check_has_key(struct sema *sema, struct node *call)
{
	struct node *map = call->args;
	call->type = type_int(8, false);
	if (map->kind != NODE_MAP || !map->args) {
		sema_error(sema, map->loc, "has_key() needs a map and a key: has_key(@m, key)");
		return;
	}
	sema_check_map_access(sema, map);
}

/* pinned_has_key("PATH", id): whether the hash map pinned at PATH holds
 * the 8-byte key id (BCC's --cgroupmap/--mntnsmap: cgroup ids, mount
 * namespace ids that another program keeps there). The map is opened when
 * the program is loaded and must exist then. */
static void check_pinned_has_key(struct sema *sema, struct node *call)
{
	struct node *path = call->args, *key = path->next;
	call->type = type_int(8, false);
	if (path->kind != NODE_STRING || !path->string_value[0]) {
		sema_error(sema, path->loc, "pinned_has_key() needs the map's path as a string literal");
		return;
	}
	sema_check_expr(sema, key);
	if (key->type && key->type->kind != TYPE_NONE && !sema_is_int(key))
		sema_error(sema, key->loc, "pinned_has_key() needs an integer key (8 bytes), not %s",
			   type_name(key->type));
}

static struct value generate_clear(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, NULL);
	return value_none();
}

static struct value generate_zero(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, NULL);
	return value_none();
}

static struct value generate_delete(struct codegen *gen, struct node *call)
{
	struct node *map_node = call->args;
	struct map_desc *map = &gen->program->maps.items[map_node->map_id];
	int key = gen_map_key(gen, map_node, map);
	struct helper_arg args[2] = { ARG_MAP(map->id), ARG_STACK(key) };
	int error = gen_call_helper(gen, BPF_FUNC_map_delete_elem, args, 2);
	if (call->value_unused)
		return value_none();
	return value_reg(gen_test_imm(gen, BPF_JEQ, error, 0), call->type);
}

/* 1 when map_id holds the key at stack offset key, else 0. */
static struct value generate_lookup_found(struct codegen *gen, struct node *call, int map_id, int key)
{
	int pointer = gen_map_lookup(gen, map_id, key);
	int result = gen_const_reg(gen, 0);
	int missing = ir_new_label(&gen->fn);
	ir_jump_if_imm(&gen->fn, BPF_JEQ, pointer, 0, missing);
	ir_mov_imm(&gen->fn, result, 1);
	ir_label(&gen->fn, missing);
	return value_reg(result, call->type);
}

static struct value generate_has_key(struct codegen *gen, struct node *call)
{
	struct node *map_node = call->args;
	struct map_desc *map = &gen->program->maps.items[map_node->map_id];
	int key = gen_map_key(gen, map_node, map);
	return generate_lookup_found(gen, call, map->id, key);
}

static struct value generate_pinned_has_key(struct codegen *gen, struct node *call)
{
	int map_id = gen_pinned_map(gen, call->args->string_value);
	struct value id = gen_expr(gen, call->args->next);
	int key = gen_value_to_stack(gen, id, type_int(8, false));
	return generate_lookup_found(gen, call, map_id, key);
}

/* len(@m): bpf_for_each_map_elem returns how many elements it visited, so
 * a callback that only says "continue" counts them. */
static struct value generate_len(struct codegen *gen, struct node *call)
{
	int saved_high;
	struct ir_function caller = gen_callback_begin(gen, &saved_high);
	ir_mov_imm(&gen->fn, BPF_REG_0, 0);
	ir_exit(&gen->fn);
	int subprogram = gen_callback_end(gen, caller, saved_high);
	int count = gen_for_each_element(gen, call->args->map_id, subprogram, ARG_IMM(0));
	return value_reg(count, call->type);
}

const struct function_def builtins_maps[] = {
	{ FUNCTION(delete, 1, 1), .key_follows_map = true },
	{ FUNCTION(clear, 1, 1) },
	{ FUNCTION(zero, 1, 1) },
	{ FUNCTION(has_key, 1, 1), .key_follows_map = true },
	{ FUNCTION(len, 1, 1) },
	{ FUNCTION(pinned_has_key, 2, 2) },
	{ 0 },
};
