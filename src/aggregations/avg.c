/* SPDX-License-Identifier: Apache-2.0 */
/* avg(x): the mean of x. { sum, count } per CPU; the sums over the counts. */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

static void check_avg(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_avg);
}

static struct value generate_avg(struct codegen *gen, struct node *call)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, amount, AGGREGATION_ONE);
	return value_none();
}

static struct value read_avg(struct codegen *gen, struct node *node, struct map_desc *map, int key)
{
	return aggregation_read(gen, node, map, key, FOLD_AVERAGE);
}

static void print_avg(struct strbuf *sb, const struct map_desc *map, const struct map_snapshot *snap,
		      int top, int div, bool json)
{
	print_map_averages(sb, map, snap, top, div, json, false);
}

const struct aggregation aggregation_avg = {
	.function = { FUNCTION(avg, 1, 1), .is_aggregation = true },
	.value_size = 16,
	.read = read_avg,
	.fold = aggregation_fold_mean,
	.print = print_avg,
	.metric_type = &metric_gauge,
	.put_metrics = metrics_put_numbers,
};
