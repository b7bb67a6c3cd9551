/* SPDX-License-Identifier: Apache-2.0 */
/* count(): how many times it ran. A u64 per CPU, summed. */
#include "aggregation.h"

#include "../compiler/codegen_internal.h"
#include "../runtime/snapshot.h"
#include "../serve/metrics.h"

static void check_count(struct sema *sema, struct node *call)
{
	aggregation_check_simple(sema, call, &aggregation_count);
}

static struct value generate_count(struct codegen *gen, struct node *call)
{
	struct aggregation_site site = aggregation_begin(gen, -1);
	aggregation_add(gen, &site, AGGREGATION_ONE, AGGREGATION_NOTHING);
	return value_none();
}

static struct value read_count(struct codegen *gen, struct node *node, struct map_desc *map, int key)
{
	return aggregation_read(gen, node, map, key, FOLD_SUM);
}

const struct aggregation aggregation_count = {
	.function = { FUNCTION(count, 0, 0), .is_aggregation = true },
	.value_size = 8,
	/* like bpftrace, a keyless count prints `@: 0` before its first event
	 * and after clear(); an array's lookup is also inlined by the verifier */
	.keyless_array = true,
	.read = read_count,
	.fold = aggregation_fold_total,
	.print = print_map_numbers,
	.metric_type = &metric_counter,
	.put_metrics = metrics_put_numbers,
};
