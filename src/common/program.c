/* SPDX-License-Identifier: Apache-2.0 */
/* Releasing a compiled program (see program.h). */
#include "program.h"

#include <stdlib.h>
#include <string.h>


int program_stack_map(const struct program *program, int depth)
{
	for (int i = 0; i < program->maps.count; i++) {
		const struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_STACKS && map->value_size == (uint32_t)depth * 8)
			return map->id;
	}
	return -1;
}

void event_desc_clear(struct event_desc *event)
{
	for (int j = 0; j < event->arg_count; j++)
		free(event->args[j].strftime_format);
	free(event->args);
	free(event->format);
	free(event->field_names);
	free(event->unit);
	free(event->trailer);
	free(event->extra_map_ids);
	free(event->match);
	memset(event, 0, sizeof(*event));
}

void probe_program_free(struct probe_program *probe)
{
	free(probe->name);
	free(probe->insns);
	free(probe->insn_locs);
	free(probe->function_starts);
}

void program_free(struct program *program)
{
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];

		free(map->name);
		free(map->sized_by);
		free(map->initial_value);
		free(map->pin_path);
		for (int k = 0; k < map->key_name_count; k++)
			free(map->key_names[k]);
		free(map->key_names);
	}
	free(program->maps.items);
	for (int i = 0; i < program->events.count; i++)
		event_desc_clear(&program->events.items[i]);
	free(program->events.items);
	for (int i = 0; i < program->probes.count; i++)
		probe_program_free(&program->probes.items[i]);
	free(program->probes.items);
	/* the points themselves belong to their providers: compile_free */
	free(program->points.items);
	for (int i = 0; i < program->options.count; i++) {
		free(program->options.items[i].name);
		free(program->options.items[i].fallback);
		free(program->options.items[i].description);
	}
	free(program->options.items);
	program->options.items = NULL;
	program->options.count = 0;
	free(program->zero_divisors.items);
	program->zero_divisors.items = NULL;
	program->zero_divisors.count = 0;
	free(program->helper_sites.items);
	program->helper_sites.items = NULL;
	program->helper_sites.count = 0;
	program->points.items = NULL;
	program->points.count = 0;
	program->maps.items = NULL;
	program->events.items = NULL;
	program->probes.items = NULL;
	program->maps.count = program->events.count = program->probes.count = 0;
}
