/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Map declarations: `let @m = lruhash(100);` before the probes, as current
 * bpftrace writes them. A declaration fixes the map's BPF kind and its
 * number of entries; everything else (key and value types) is inferred from
 * the map's uses as for any map. sonde keeps every aggregation (count(),
 * hist(), ...) in per-CPU storage and folds the CPUs' copies when printing,
 * so an aggregation needs a per-CPU kind and a plain value a shared one;
 * the mismatch is an error at the declaration rather than a silent change.
 * A percpuarray holds the one value of a map without keys (bpftrace uses it
 * for a keyless count(), sum(), ...): index 0 of a per-CPU array.
 */
#include "sema_internal.h"

#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

#include "../aggregations/aggregation.h"

static const struct {
	const char *name;
	uint32_t bpf_map_type;
	bool is_per_cpu;
} map_kinds[] = {
	{ "hash", BPF_MAP_TYPE_HASH, false },
	{ "lruhash", BPF_MAP_TYPE_LRU_HASH, false },
	{ "percpuhash", BPF_MAP_TYPE_PERCPU_HASH, true },
	{ "percpulruhash", BPF_MAP_TYPE_LRU_PERCPU_HASH, true },
	/* one value per CPU without a key (a keyless count(), sum(), ...) */
	{ "percpuarray", BPF_MAP_TYPE_PERCPU_ARRAY, true },
};

/* The most entries a declaration may ask for: the kernel would take more,
 * but preallocated hash maps that big cost gigabytes. */
#define MAX_DECLARED_ENTRIES (1 << 24)

static bool kind_is_per_cpu(uint32_t bpf_map_type)
{
	for (size_t i = 0; i < sizeof(map_kinds) / sizeof(map_kinds[0]); i++)
		if (map_kinds[i].bpf_map_type == bpf_map_type)
			return map_kinds[i].is_per_cpu;
	return false;
}

static void declare_map(struct sema *sema, struct node *decl)
{
	size_t kind = 0;
	while (kind < sizeof(map_kinds) / sizeof(map_kinds[0]) &&
	       strcmp(map_kinds[kind].name, decl->string_value) != 0)
		kind++;
	if (kind == sizeof(map_kinds) / sizeof(map_kinds[0])) {
		sema_error(sema, decl->loc, "unknown map kind '%s' for %s: hash, lruhash, percpuhash, "
			   "percpulruhash or percpuarray", decl->string_value, decl->name);
		return;
	}
	for (int i = 0; i < sema->program->maps.count; i++) {
		if (sema->program->maps.items[i].role == MAP_ROLE_USER &&
		    strcmp(sema->program->maps.items[i].name, decl->name) == 0) {
			sema_error(sema, decl->loc, "%s is declared twice", decl->name);
			return;
		}
	}
	sema_check_expr(sema, decl->lhs);
	if (decl->lhs->type && decl->lhs->type->kind == TYPE_NONE)
		return; /* reported */
	if (!sema_is_int_constant(decl->lhs) || (int64_t)decl->lhs->const_value < 1 ||
	    decl->lhs->const_value > MAX_DECLARED_ENTRIES) {
		sema_error(sema, decl->lhs->loc, "%s's number of entries must be a constant from 1 to %d",
			   decl->name, MAX_DECLARED_ENTRIES);
		return;
	}
	struct map_desc *map = sema_map_for(sema, decl);
	map->is_declared = true;
	map->bpf_map_type = map_kinds[kind].bpf_map_type;
	map->max_entries = (uint32_t)decl->lhs->const_value;
	free(map->sized_by);
	map->sized_by = NULL;
}

int sema_declare_maps(struct sema *sema, struct node *definitions)
{
	int errors = sema->error_count;
	for (struct node *node = definitions; node; node = node->next)
		if (node->kind == NODE_MAP_DECL)
			declare_map(sema, node);
	return sema->error_count > errors ? -1 : 0;
}

void sema_check_declared_maps(struct sema *sema)
{
	for (int i = 0; i < sema->program->maps.count; i++) {
		struct map_desc *map = &sema->program->maps.items[i];
		if (!map->is_declared)
			continue;
		struct src_loc at = sema->map_uses.items[i].first;
		if (!map->value_type) {
			sema_error(sema, at, "%s is declared but never used", map->name);
			map->value_type = type_int(8, true);
			continue;
		}
		bool aggregation = type_is_aggregation(map->value_type);
		if (aggregation && !kind_is_per_cpu(map->bpf_map_type))
			sema_error(sema, at, "%s holds %s values, which are kept per CPU: declare it "
				   "percpuhash(N) or percpulruhash(N)", map->name, type_name(map->value_type));
		else if (!aggregation && kind_is_per_cpu(map->bpf_map_type))
			sema_error(sema, at, "%s holds %s values, which a per-CPU map cannot sum up: declare "
				   "it hash(N) or lruhash(N)", map->name, type_name(map->value_type));
		else if (map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY && map->key_type)
			sema_error(sema, at, "%s has keys, which a percpuarray cannot hold: declare it "
				   "percpuhash(N)", map->name);
		else if (map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY && type_is_bucketed(map->value_type))
			sema_error(sema, at, "%s holds %s values, whose buckets a percpuarray cannot hold: "
				   "declare it percpuhash(N)", map->name, type_name(map->value_type));
		else if (map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY && map->max_entries != 1)
			sema_error(sema, at, "%s has no keys, so its percpuarray holds one value: declare it "
				   "percpuarray(1)", map->name);
	}
}
