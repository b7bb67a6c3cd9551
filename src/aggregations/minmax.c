/* SPDX-License-Identifier: Apache-2.0 */
/* min(x) and max(x): { value, is_set } per CPU; the CPUs that set one compared. */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

static void check_min(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_min);
}

static void check_max(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_max);
}

static struct value generate_min(struct codegen *gen, struct node *call)
{
	aggregation_update_extreme(gen, call, false);
	return value_none();
}

static struct value generate_max(struct codegen *gen, struct node *call)
{
	aggregation_update_extreme(gen, call, true);
	return value_none();
}

static struct value read_min(struct codegen *gen, struct node *node, struct map_desc *map, int key)
{
	return aggregation_read(gen, node, map, key, FOLD_MIN);
}

static struct value read_max(struct codegen *gen, struct node *node, struct map_desc *map, int key)
{
	return aggregation_read(gen, node, map, key, FOLD_MAX);
}

static uint64_t fold_min(const struct map_snapshot *snap, const struct type *type,
			 const unsigned char *value)
{
	return aggregation_fold_extreme(snap, value, false, type->is_signed);
}

static uint64_t fold_max(const struct map_snapshot *snap, const struct type *type,
			 const unsigned char *value)
{
	return aggregation_fold_extreme(snap, value, true, type->is_signed);
}

const struct aggregation aggregation_min = {
	.function = { FUNCTION(min, 1, 1), .is_aggregation = true },
	.value_size = 16,
	.read = read_min,
	.fold = fold_min,
	.print = print_map_numbers,
	.metric_type = &metric_gauge,
	.put_metrics = metrics_put_numbers,
};

const struct aggregation aggregation_max = {
	.function = { FUNCTION(max, 1, 1), .is_aggregation = true },
	.value_size = 16,
	.read = read_max,
	.fold = fold_max,
	.print = print_map_numbers,
	.metric_type = &metric_gauge,
	.put_metrics = metrics_put_numbers,
};
