/* SPDX-License-Identifier: Apache-2.0 */
/* Loss totals, read when asked: see losses.h. */
#include "runtime/losses.h"

#include "common/program.h"
#include "common/util.h"
#include "runtime/skipped.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>

bool lost_slot_total(int fd, uint32_t slot, uint64_t *values, int cpus, uint64_t *total)
{
	*total = 0;
	if (bpf_map_lookup_elem(fd, &slot, values) != 0)
		return false;
	for (int cpu = 0; cpu < cpus; cpu++)
		*total += values[cpu];
	return true;
}

void losses_read(const struct program *program, struct losses *out)
{
	const struct map_desc *lost = program->lost_map_id >= 0
				      ? &program->maps.items[program->lost_map_id] : NULL;
	int cpus = libbpf_num_possible_cpus();

	*out = (struct losses){ .probe_runs = skipped_runs_total(program) };
	if (!lost || lost->fd < 0 || cpus <= 0)
		return;
	uint64_t *values = xcalloc((size_t)cpus, sizeof(uint64_t));
	lost_slot_total(lost->fd, LOST_SLOT_EVENTS, values, cpus, &out->events);
	lost_slot_total(lost->fd, LOST_SLOT_REFUSED, values, cpus, &out->map_updates);
	lost_slot_total(lost->fd, LOST_SLOT_STACKS, values, cpus, &out->stacks);
	free(values);
}
