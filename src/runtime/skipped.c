/* SPDX-License-Identifier: Apache-2.0 */
/* Probe runs the kernel skipped: see skipped.h. */
#include "runtime/skipped.h"

#include "common/program.h"
#include "common/util.h"

#include <bpf/bpf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SKIPPED_CHECK_NS 1000000000ull
#define SKIPPED_REPORT_NS 5000000000ull
/* probes named in one line; the rest are counted */
#define SKIPPED_NAMES 3

struct skipped_runs {
	const struct program *program;
	bool *tracked;              /* by probe: the first probe of its BPF program */
	uint64_t *reported;         /* by probe: its count at the last line */
	uint64_t *seen;             /* by probe: its count at the last read */
	bool found;                 /* tracked is set (at the first check) */
	uint64_t checked_ns;
	uint64_t reported_ns;       /* 0 = never reported */
	uint64_t total_reported;
	int reports;
};

static bool skipped_info(int fd, struct bpf_prog_info *info)
{
	uint32_t length = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return fd >= 0 && bpf_obj_get_info_by_fd(fd, info, &length) == 0;
}

struct skipped_runs *skipped_runs_new(const struct program *program)
{
	struct skipped_runs *runs = xcalloc(1, sizeof(*runs));
	size_t count = (size_t)program->probes.count + 1;

	runs->program = program;
	runs->tracked = xcalloc(count, sizeof(bool));
	runs->reported = xcalloc(count, sizeof(uint64_t));
	runs->seen = xcalloc(count, sizeof(uint64_t));
	return runs;
}

struct skipped_id {
	uint32_t id;
	int probe;
	uint64_t misses;    /* recursion_misses when the ids were read */
};

static int skipped_id_compare(const void *pa, const void *pb)
{
	const struct skipped_id *a = pa, *b = pb;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->probe - b->probe;
}

/* The loaded programs of program's probes, sorted by id (probes with the
 * same code share one): how many, into ids (room for every probe). */
static int skipped_program_ids(const struct program *program, struct skipped_id *ids)
{
	int count = 0;

	for (int i = 0; i < program->probes.count; i++) {
		const struct probe_program *probe = &program->probes.items[i];
		struct bpf_prog_info info;

		if (probe->role == PROBE_ROLE_NORMAL && skipped_info(probe->prog_fd, &info))
			ids[count++] = (struct skipped_id){ info.id, i, info.recursion_misses };
	}
	qsort(ids, (size_t)count, sizeof(*ids), skipped_id_compare);
	return count;
}

/* At the first check, not at start (where it would delay attaching): which
 * probes to read. Probes with the same code share one loaded program and
 * its count, read through the first of them. The programs were loaded
 * fresh, so every count starts from 0. */
static void skipped_find_programs(struct skipped_runs *runs)
{
	const struct program *program = runs->program;
	struct skipped_id *ids = xcalloc((size_t)program->probes.count + 1, sizeof(*ids));
	int count = skipped_program_ids(program, ids);

	for (int i = 0; i < count; i++)
		runs->tracked[ids[i].probe] = i == 0 || ids[i].id != ids[i - 1].id;
	free(ids);
	runs->found = true;
}

uint64_t skipped_runs_total(const struct program *program)
{
	struct skipped_id *ids = xcalloc((size_t)program->probes.count + 1, sizeof(*ids));
	int count = skipped_program_ids(program, ids);
	uint64_t total = 0;

	for (int i = 0; i < count; i++)
		if (i == 0 || ids[i].id != ids[i - 1].id)
			total += ids[i].misses;
	free(ids);
	return total;
}

void skipped_runs_free(struct skipped_runs *runs)
{
	if (!runs)
		return;
	free(runs->tracked);
	free(runs->reported);
	free(runs->seen);
	free(runs);
}

void skipped_runs_check(struct skipped_runs *runs, bool at_exit, FILE *out)
{
	const struct program *program;
	uint64_t now = monotonic_ns(), growth = 0;

	if (!runs || (!at_exit && now - runs->checked_ns < SKIPPED_CHECK_NS))
		return;
	runs->checked_ns = now;
	if (!runs->found)
		skipped_find_programs(runs);
	program = runs->program;
	for (int i = 0; i < program->probes.count; i++) {
		struct bpf_prog_info info;

		if (runs->tracked[i] && skipped_info(program->probes.items[i].prog_fd, &info))
			runs->seen[i] = info.recursion_misses;
		growth += runs->seen[i] - runs->reported[i];
	}
	if (growth && (at_exit || !runs->reported_ns ||
		       now - runs->reported_ns >= SKIPPED_REPORT_NS)) {
		struct strbuf names;
		int named = 0, more = 0;

		strbuf_init(&names);
		for (int i = 0; i < program->probes.count; i++) {
			uint64_t grew = runs->seen[i] - runs->reported[i];

			if (!grew)
				continue;
			if (named++ < SKIPPED_NAMES)
				strbuf_printf(&names, "%s%s (%llu)", names.length ? ", " : "",
					      program->probes.items[i].name, (unsigned long long)grew);
			else
				more++;
			runs->reported[i] = runs->seen[i];
		}
		if (more)
			strbuf_printf(&names, " and %d more", more);
		if (out)
			fflush(out);
		fprintf(stderr, "Lost %llu probe runs: the kernel skipped %s while another BPF "
			"program was running on the same CPU\n", (unsigned long long)growth,
			names.data);
		strbuf_free(&names);
		runs->total_reported += growth;
		runs->reports++;
		runs->reported_ns = now;
	}
	if (at_exit && runs->reports > 1)
		fprintf(stderr, "Lost %llu probe runs in total\n",
			(unsigned long long)runs->total_reported);
}
