/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the programs and the kernel counted as lost, read when asked: the
 * slots of the .lost map (records the ring buffer could not take, map
 * updates a full map refused, stacks the stack map could not take) and the
 * probe runs the kernel skipped (skipped.h). The event loop reports their
 * growth on stderr as it happens; sonde serve exports the totals.
 */
#ifndef SONDE_LOSSES_H
#define SONDE_LOSSES_H

#include <stdbool.h>
#include <stdint.h>

struct program;

struct losses {
	uint64_t events;        /* LOST_SLOT_EVENTS */
	uint64_t map_updates;   /* LOST_SLOT_REFUSED */
	uint64_t stacks;        /* LOST_SLOT_STACKS */
	uint64_t probe_runs;    /* recursion_misses, each loaded program once */
};

/* The totals so far of a loaded program (0 for what it cannot lose). */
void losses_read(const struct program *program, struct losses *out);

/* The sum over cpus of one slot of the .lost map at fd, read through values
 * (room for cpus); false if it cannot be read. */
bool lost_slot_total(int fd, uint32_t slot, uint64_t *values, int cpus, uint64_t *total);

#endif
