/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compiler pipeline, start to end: parse, analyse, lay out maps, then
 * generate one BPF program per probe point. See compiler.h.
 */
#include "compiler.h"

#include <stdlib.h>
#include <string.h>

#include "../aggregations/aggregation.h"
#include "ast.h"
#include "codegen.h"
#include "config.h"
#include "sema.h"

const struct map_size *compile_options_map_size(const struct compile_options *options,
						const char *name)
{
	for (int i = 0; i < options->map_size_count; i++)
		if (strcmp(options->map_sizes[i].map, name) == 0)
			return &options->map_sizes[i];
	return NULL;
}

static int add_internal_map(struct program *program, const char *name, enum map_role role,
			    uint32_t bpf_type, uint32_t key_size, uint32_t value_size, uint32_t entries)
{
	struct map_desc map = {
		.id = program->maps.count, .name = xstrdup(name), .role = role,
		.bpf_map_type = bpf_type, .key_size = key_size, .value_size = value_size,
		.max_entries = entries, .fd = -1,
	};
	vec_push(&program->maps, map);
	return map.id;
}

/* Sizes and BPF map types of user maps, now that their types are final. */
static void lay_out_maps(struct program *program, bool hist_sums)
{
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		if (map->role != MAP_ROLE_USER)
			continue;
		uint32_t key_size = map->key_type ? (type_storage_size(map->key_type) + 7) & ~7 : 0;
		bool bucketed = type_is_bucketed(map->value_type);
		if (bucketed)
			key_size += 8;
		map->key_size = key_size ? key_size : 8;
		map->value_size = (type_storage_size(map->value_type) + 7) & ~7;
		if (map->value_size == 0)
			map->value_size = 8;
		const struct aggregation *aggregation = map->value_type->aggregation;
		/* hist/lhist buckets that also sum their values (sonde serve) */
		if (aggregation && hist_sums && aggregation->summed_value_size)
			map->value_size = (uint32_t)aggregation->summed_value_size;
		/* a declared percpuarray: the keyless value at index 0 */
		if (map->is_declared && map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY)
			map->key_size = 4;
		if (map->is_declared)
			continue; /* kind and size as the script declared them */
		map->bpf_map_type = type_is_aggregation(map->value_type) ? BPF_MAP_TYPE_PERCPU_HASH
									 : BPF_MAP_TYPE_HASH;
		/* a keyless count() is one per-CPU array slot (aggregations/count.c) */
		if (aggregation && aggregation->keyless_array && !map->key_type) {
			map->bpf_map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
			map->key_size = 4;
			map->max_entries = 1;
			free(map->sized_by);
			map->sized_by = NULL;
		}
		/* a keyless hist/lhist: one array slot per bucket, indexed by it */
		if (bucketed && !map->key_type) {
			const struct type *value = map->value_type;
			map->bpf_map_type = BPF_MAP_TYPE_PERCPU_ARRAY;
			map->key_size = 4;
			map->max_entries = (uint32_t)aggregation->bucket_count(value);
			free(map->sized_by);
			map->sized_by = NULL;
		}
		if (bucketed && map->key_type && map->max_entries < 64 * 16)
			map->max_entries = 4096 * 4;
		/* any other map without a key has the one key 0: a hash map keeps
		 * spare elements to replace it with, a per-CPU one updates it in
		 * place, and the kernel need not preallocate 4096 (a millisecond
		 * of start-up each) */
		if (!map->key_type && !bucketed && map->max_entries > 1 &&
		    (map->bpf_map_type == BPF_MAP_TYPE_HASH ||
		     map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH)) {
			map->max_entries = 1;
			free(map->sized_by);
			map->sized_by = NULL;
		}
	}
}

static enum probe_role role_of(const struct probe_point *point)
{
	if (strcmp(point->provider->name, "BEGIN") == 0)
		return PROBE_ROLE_BEGIN;
	if (strcmp(point->provider->name, "END") == 0)
		return PROBE_ROLE_END;
	return PROBE_ROLE_NORMAL;
}

/* A NUL byte would silently end the program text: everything after it
 * would be ignored. Reports the first one; -1 when there is one. */
static int check_nul_bytes(const struct source *source, struct diag *diag)
{
	size_t length = strlen(source->text);
	if (length >= source->length)
		return 0;
	struct src_loc loc = { .line = 1, .column = 1 };
	for (size_t i = 0; i < length; i++) {
		loc.column++;
		if (source->text[i] == '\n') {
			loc.line++;
			loc.column = 1;
		}
	}
	diag_error(diag, loc, "a NUL byte in the program text: is this a binary file?");
	return -1;
}

/* Whether each group's points all compiled to one program (a body that
 * names nothing of its point but through the group's tables), which can
 * then be attached alone (probe_group.one_program); not when a point has
 * no program. */
static void find_one_program_groups(struct program *program)
{
	for (int i = 0; i < program->probes.count; i++) {
		struct probe_point *point = program->probes.items[i].point;
		if (point && point->group)
			point->group->one_program = true;
	}
	VEC(struct probe_group *) seen = { 0 };
	for (int i = 0; i < program->probes.count; i++) {
		const struct probe_program *probe = &program->probes.items[i];
		struct probe_group *group = probe->point ? probe->point->group : NULL;
		bool scanned = false;
		for (int k = 0; group && k < seen.count && !scanned; k++)
			scanned = seen.items[k] == group;
		if (!group || scanned)
			continue;
		vec_push(&seen, group);
		int programs = 0;
		const struct probe_program *first = NULL;
		for (int j = i; j < program->probes.count; j++) {
			const struct probe_program *other = &program->probes.items[j];
			if (!other->point || other->point->group != group)
				continue;
			programs++;
			if (!first)
				first = other;
			else if (other->insn_count != first->insn_count ||
				 memcmp(other->insns, first->insns,
					sizeof(*other->insns) * (size_t)other->insn_count) != 0)
				group->one_program = false;
		}
		if (programs != group->refs)
			group->one_program = false;
	}
	free(seen.items);
}

int compile_program(const struct source *source, const struct compile_options *options,
		    struct program *program, struct diag *diag)
{
	struct ast ast = { 0 };
	program->source = *source;
	program->ringbuf_map_id = program->lost_map_id = -1;
	program->config_map_id = program->scratch_map_id = -1;
	program->pids_map_id = program->process_seen_event = -1;
	if (check_nul_bytes(source, diag) < 0)
		return -1;
	/* the lexer sees the text with C directives blanked; diagnostics still
	 * quote the original, whose lines and columns are the same */
	struct preprocessed pre = { 0 };
	if (preprocess_program(source->text, options->script_path, options->macros,
			       options->macro_count, &pre, diag) < 0) {
		preprocessed_free(&pre);
		return -1;
	}
	struct source stripped = { .filename = source->filename, .text = pre.text };
	if (parse_program(&stripped, &ast, diag) < 0) {
		ast_free(&ast);
		preprocessed_free(&pre);
		return -1;
	}
	if (options->dump) {
		fprintf(options->dump, "AST:\n");
		ast_dump(&ast, options->dump);
	}
	/* the config block fills in what the environment left unset */
	struct compile_options configured = *options;
	if (config_apply(&ast, &configured, options, program, diag) < 0) {
		ast_free(&ast);
		preprocessed_free(&pre);
		return -1;
	}
	if (!configured.max_strlen)
		configured.max_strlen = MAX_STRLEN_DEFAULT;
	options = &configured;
	struct sema sema = { .diag = diag, .options = options, .program = program,
			     .macros = &pre.macros };
	int result = sema_analyze(&sema, &ast);
	if (result == 0) {
		lay_out_maps(program, options->hist_sums);
		/* its size is the loader's (SONDE_RINGBUF_SIZE, runtime/load.c) */
		program->ringbuf_map_id = add_internal_map(program, ".ringbuf", MAP_ROLE_RINGBUF,
							   BPF_MAP_TYPE_RINGBUF, 0, 0, 0);
		program->lost_map_id = add_internal_map(program, ".lost", MAP_ROLE_LOST,
							BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8,
							(uint32_t)(LOST_SLOT_ZERO_DIVISOR +
								   program->zero_divisors.count));
		/* -k's sites come after the divisions; code generation finds them
		 * and the map grows by two slots each below */
		program->helper_slot_base = LOST_SLOT_ZERO_DIVISOR + program->zero_divisors.count;
		program->config_map_id = add_internal_map(program, ".config", MAP_ROLE_CONFIG,
							  BPF_MAP_TYPE_ARRAY, 4,
							  sizeof(struct program_config), 1);
		if (sema.uses_user_symbols) {
			program->pids_map_id = add_internal_map(program, ".pids", MAP_ROLE_PIDS,
								BPF_MAP_TYPE_LRU_HASH,
								sizeof(struct seen_process), 8, 4096);
			struct event_desc seen = { .kind = EVENT_PROCESS_SEEN, .arg_count = 1,
						   .record_size = 16 };
			seen.args = xcalloc(1, sizeof(*seen.args));
			seen.args[0] = (struct event_arg){ .type = type_int(8, false), .offset = 8 };
			vec_push(&program->events, seen);
			program->process_seen_event = program->events.count - 1;
		}
		const struct map_size *stack_size = compile_options_map_size(options, "stack-map");
		for (int depth = 1; depth < 128; depth++) {
			if (!sema.stack_depths[depth])
				continue;
			int id = add_internal_map(program, ".stacks", MAP_ROLE_STACKS,
						  BPF_MAP_TYPE_STACK_TRACE, 4,
						  (uint32_t)depth * sizeof(uint64_t),
						  stack_size ? stack_size->entries
						  : options->stack_storage_size ? options->stack_storage_size
						  : 16384);
			program->maps.items[id].sized_by = xstrdup(stack_size ? stack_size->option
								   : "SONDE_STACK_STORAGE_SIZE");
		}
		/* records too big for the 512-byte BPF stack are built in a per-CPU buffer */
		int scratch_bytes = 0;
		for (int i = 0; i < program->events.count; i++)
			if ((program->events.items[i].kind == EVENT_JOIN ||
			     program->events.items[i].record_size > EVENT_STACK_RECORD_MAX) &&
			    program->events.items[i].record_size > scratch_bytes)
				scratch_bytes = program->events.items[i].record_size;
		if (scratch_bytes)
			program->scratch_map_id = add_internal_map(program, ".scratch", MAP_ROLE_SCRATCH,
								   BPF_MAP_TYPE_PERCPU_ARRAY, 4,
								   (uint32_t)scratch_bytes, 1);
	}
	for (int i = 0; result == 0 && i < sema.probes.count; i++) {
		struct probe_info *probe = &sema.probes.items[i];
		probe_points_group_by_cookie(&probe->points);
		for (int j = 0; result == 0 && j < probe->points.count; j++) {
			struct probe_point *point = probe->points.items[j];
			/* -p: user-space probes attach to that process only */
			point->pid = options->target_pid;
			if (sema_retype_for_point(&sema, probe, point) < 0) {
				result = -1;
				break;
			}
			struct probe_program out = {
				.name = xstrdup(point->name), .point = point, .role = role_of(point),
				.prog_type = point->provider->prog_type, .prog_fd = -1,
			};
			/* fentry/fexit and kprobe_multi say how the kernel must load them */
			if (point->provider->prepare_load) {
				char *error = NULL;
				int attach_btf_obj_fd = 0;
				if (point->provider->prepare_load(point, &out.expected_attach_type,
								  &out.attach_btf_id, &attach_btf_obj_fd,
								  &error) < 0) {
					diag_error(diag, probe->node->loc, "%s", error ? error : "cannot load probe");
					free(error);
					free(out.name);
					result = -1;
					break;
				}
				out.attach_btf_obj_fd = attach_btf_obj_fd;
			}
			if (codegen_probe(&sema, probe, point, &out, options->dump, diag) < 0) {
				/* a check after emission (too many maps) leaves code behind */
				probe_program_free(&out);
				result = -1;
				break;
			}
			/* `r0 = 0; exit`: a tool's probe whose every statement folded
			 * away (an option that is off) is not even attached */
			if (options->drop_empty_probes && out.insn_count <= 2 &&
			    out.role == PROBE_ROLE_NORMAL) {
				probe_program_free(&out);
				continue;
			}
			vec_push(&program->probes, out);
		}
	}
	if (result == 0 && program->helper_sites.count)
		program->maps.items[program->lost_map_id].max_entries +=
			(uint32_t)(2 * program->helper_sites.count);
	if (result == 0)
		find_one_program_groups(program);
	for (int i = 0; i < sema.probes.count; i++) {
		struct probe_info *probe = &sema.probes.items[i];
		for (int j = 0; j < probe->vars.count; j++)
			free(probe->vars.items[j].name);
		free(probe->vars.items);
		/* the program owns every point, compiled or not */
		for (int j = 0; j < probe->points.count; j++)
			vec_push(&program->points, probe->points.items[j]);
		free(probe->points.items);
	}
	free(sema.probes.items);
	for (int i = 0; i < sema.skipped.count; i++) {
		for (int j = 0; j < sema.skipped.items[i].vars.count; j++)
			free(sema.skipped.items[i].vars.items[j].name);
		free(sema.skipped.items[i].vars.items);
	}
	free(sema.skipped.items);
	free(sema.map_uses.items);
	sema_types_free(&sema);
	free(sema.visible.items);
	free(sema.unscoped.items);
	ast_free(&ast);
	preprocessed_free(&pre);
	return result;
}

void compile_free(struct program *program)
{
	for (int i = 0; i < program->points.count; i++)
		probe_point_free(program->points.items[i]);
	program_free(program);
}
