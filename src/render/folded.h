/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Folded stacks: the text form of a sampled profile that flame graphs are
 * drawn from, one line a stack, `outermost;...;innermost COUNT`, as Brendan
 * Gregg's stackcollapse scripts write it (and flamegraph.pl, speedscope and
 * inferno read it).
 *
 * A folded_set is a bag of such stacks with their counts. It is filled by
 * the runtime from a stack map (print_folded(), --svg), or parsed from text:
 * folded lines, bpftrace's (and sonde's) `@[kstack, ustack, comm]: N` map
 * output, or `perf script` output; folded_parse() tells which by looking.
 */
#ifndef SONDE_FOLDED_H
#define SONDE_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "../common/util.h"

struct folded_stack {
	char *frames;       /* "comm;outermost;...;innermost", owned */
	uint64_t count;
};

struct folded_set {
	VEC(struct folded_stack) stacks;
	/* open-addressing hash index into stacks (position + 1; 0 is a free
	 * slot), so that adding 10,000s of stacks stays linear */
	int *index;
	size_t index_size;
	/* every count summed, at most FOLDED_TOTAL_MAX: a count that would
	 * take it further is cut there and overflow is set, so that a picture
	 * can refuse rather than draw wrapped numbers */
	uint64_t total;
	bool overflow;
};

/* The most samples a set holds: INT64_MAX, so that a differential graph's
 * change (samples now minus before) and every sum of them fit in an int64. */
#define FOLDED_TOTAL_MAX ((uint64_t)INT64_MAX)

/* Adds count samples of the stack (frames as in struct folded_stack);
 * the same stack added twice keeps one entry with the counts summed. */
void folded_add(struct folded_set *set, const char *frames, uint64_t count);
/* The same with frames (malloc'd) handed over: kept, or freed when the
 * stack was there already. */
void folded_take(struct folded_set *set, char *frames, uint64_t count);
/* The position of the stack with exactly these frames in set->stacks, or -1. */
int folded_find(const struct folded_set *set, const char *frames);
/* Parses text in any of the three forms above, adding to set. 0, or -EINVAL
 * with *error set to one sentence naming the line at fault (-EOVERFLOW when
 * the counts add up past FOLDED_TOTAL_MAX). */
int folded_parse(struct folded_set *set, const char *text, size_t length, char **error);
/* "a;b;c" as "c;b;a" (malloc'd): --reverse, the leaf at the root. */
char *folded_reverse_frames(const char *frames);
/* Appends the set as folded lines, sorted by stack, to out. */
void folded_write(const struct folded_set *set, struct strbuf *out);
/* strcmp() for frames: ';' sorts before every other byte, so that the
 * stacks under one frame are neighbours ("a;b;c" before "a;b!"). */
int folded_compare_frames(const char *left, const char *right);
/* The set's stacks sorted by their frames (as folded_write lists them);
 * an array of set->stacks.count pointers into the set, caller frees. */
const struct folded_stack **folded_sorted(const struct folded_set *set);
void folded_free(struct folded_set *set);

#endif
