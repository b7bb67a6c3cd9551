/* SPDX-License-Identifier: Apache-2.0 */
/* stats(x): count, average and total of x. { sum, count } per CPU, like avg. */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

static void check_stats(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_stats);
}

static struct value generate_stats(struct codegen *gen, struct node *call)
{
	int amount = gen_value_to_reg(gen, gen_expr(gen, call->args));
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, amount, AGGREGATION_ONE);
	return value_none();
}

static void print_stats(struct strbuf *sb, const struct map_desc *map, const struct map_snapshot *snap,
			int top, int div, bool json)
{
	print_map_averages(sb, map, snap, top, div, json, true);
}

const struct aggregation aggregation_stats = {
	.function = { FUNCTION(stats, 1, 1), .is_aggregation = true },
	.value_size = 16,
	.fold = aggregation_fold_mean,
	.print = print_stats,
	.metric_type = &metric_summary,
	.put_metrics = metrics_put_summaries,
};
