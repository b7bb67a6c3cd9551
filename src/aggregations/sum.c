/* SPDX-License-Identifier: Apache-2.0 */
/* sum(x): x added up. An s64/u64 per CPU, summed. */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

static void check_sum(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_sum);
}

static struct value generate_sum(struct codegen *gen, struct node *call)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, amount, AGGREGATION_NOTHING);
	return value_none();
}

static struct value read_sum(struct codegen *gen, struct node *node, struct map_desc *map, int key)
{
	return aggregation_read(gen, node, map, key, FOLD_SUM);
}

const struct aggregation aggregation_sum = {
	.function = { FUNCTION(sum, 1, 1), .is_aggregation = true },
	.value_size = 8,
	.read = read_sum,
	.fold = aggregation_fold_total,
	.print = print_map_numbers,
	.metric_type = &metric_counter,
	.put_metrics = metrics_put_numbers,
};
