/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Folded stacks: the bag of stacks a flame graph is drawn from, and the
 * readers of the three text forms profiles come in.
 *
 * The bag is a vector plus an open-addressing hash index, so the same stack
 * added again only adds to its count; writing sorts by frames, which is the
 * order stackcollapse writes and the order a flame graph lays frames out.
 *
 * The readers turn each sample into "comm;outermost;...;innermost":
 *   - folded lines: `a;b;c 12`, the count being the last word (frame names
 *     may hold spaces, as C++ signatures do);
 *   - bpftrace's (and sonde's) print of a map keyed by stacks:
 *     `@[\n    frame+off\n ...\n, \n    frame\n, comm]: N`. A key is a list
 *     of elements separated by ", ": a stack starts with a newline and is one
 *     indented frame a line, innermost first; anything else is a scalar (the
 *     comm, a pid). The output does not say which stack is the kernel's, so
 *     each stack position of a map is judged by its frames (kernel entry
 *     points, kernel addresses); failing that, the first of two stacks is
 *     the kernel's, as in the usual `@[kstack, ustack, comm]`;
 *   - `perf script`: a header line per sample (`comm pid ... event:`), its
 *     frames indented below it as `addr symbol+off (dso)`, innermost first,
 *     and a blank line after it.
 * The form is told by looking at the first lines. Frames lose their
 * `+offset` (so samples at different places of one function merge), and
 * frames that name no symbol become "[unknown]", as flamegraph.pl expects.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"

/* ---- the bag ---- */

static uint64_t folded_hash(const char *text)
{
	uint64_t hash = 1469598103934665603ull;   /* FNV-1a */

	for (; *text; text++)
		hash = (hash ^ (unsigned char)*text) * 1099511628211ull;
	return hash;
}

static void folded_index_insert(struct folded_set *set, int position)
{
	size_t mask = set->index_size - 1;
	size_t slot = folded_hash(set->stacks.items[position].frames) & mask;

	while (set->index[slot])
		slot = (slot + 1) & mask;
	set->index[slot] = position + 1;
}

static void folded_index_grow(struct folded_set *set)
{
	free(set->index);
	set->index_size = set->index_size ? set->index_size * 2 : 64;
	set->index = xcalloc(set->index_size, sizeof(*set->index));
	for (int i = 0; i < set->stacks.count; i++)
		folded_index_insert(set, i);
}

/* Adds the stack; frames is stored as is when new (owned is the copy to
 * keep, or NULL to copy frames). Returns whether frames was stored. */
static bool folded_insert(struct folded_set *set, const char *frames, char *owned,
			  uint64_t count)
{
	struct folded_stack stack;
	size_t mask, slot;

	if (count > FOLDED_TOTAL_MAX - set->total) {
		count = FOLDED_TOTAL_MAX - set->total;
		set->overflow = true;
	}
	set->total += count;
	if ((size_t)(set->stacks.count + 1) * 2 > set->index_size)
		folded_index_grow(set);
	mask = set->index_size - 1;
	for (slot = folded_hash(frames) & mask; set->index[slot]; slot = (slot + 1) & mask) {
		struct folded_stack *known = &set->stacks.items[set->index[slot] - 1];

		if (strcmp(known->frames, frames) == 0) {
			known->count += count;
			return false;
		}
	}
	stack.frames = owned ? owned : xstrdup(frames);
	stack.count = count;
	vec_push(&set->stacks, stack);
	set->index[slot] = set->stacks.count;
	return true;
}

void folded_add(struct folded_set *set, const char *frames, uint64_t count)
{
	folded_insert(set, frames, NULL, count);
}

void folded_take(struct folded_set *set, char *frames, uint64_t count)
{
	if (!folded_insert(set, frames, frames, count))
		free(frames);
}

int folded_find(const struct folded_set *set, const char *frames)
{
	size_t mask = set->index_size - 1;

	if (!set->index_size)
		return -1;
	for (size_t slot = folded_hash(frames) & mask; set->index[slot]; slot = (slot + 1) & mask) {
		if (strcmp(set->stacks.items[set->index[slot] - 1].frames, frames) == 0)
			return set->index[slot] - 1;
	}
	return -1;
}

static int folded_rank(unsigned char c)
{
	return c == 0 ? 0 : c == ';' ? 1 : c + 1;
}

/* Frame by frame, which is what lets a flame graph merge in one pass. */
int folded_compare_frames(const char *left, const char *right)
{
	for (; *left && *left == *right; left++, right++)
		;
	return folded_rank((unsigned char)*left) - folded_rank((unsigned char)*right);
}

static int folded_compare(const void *a, const void *b)
{
	return folded_compare_frames((*(const struct folded_stack *const *)a)->frames,
				     (*(const struct folded_stack *const *)b)->frames);
}

const struct folded_stack **folded_sorted(const struct folded_set *set)
{
	const struct folded_stack **sorted = xcalloc(set->stacks.count + 1, sizeof(*sorted));

	for (int i = 0; i < set->stacks.count; i++)
		sorted[i] = &set->stacks.items[i];
	qsort(sorted, set->stacks.count, sizeof(*sorted), folded_compare);
	return sorted;
}

char *folded_reverse_frames(const char *frames)
{
	size_t length = strlen(frames);
	char *reversed = xmalloc(length + 1);
	size_t at = 0;
	const char *end = frames + length;

	while (end > frames) {
		const char *start = end;

		while (start > frames && start[-1] != ';')
			start--;
		if (at)
			reversed[at++] = ';';
		memcpy(reversed + at, start, (size_t)(end - start));
		at += (size_t)(end - start);
		end = start > frames ? start - 1 : frames;
	}
	reversed[at] = 0;
	return reversed;
}

void folded_write(const struct folded_set *set, struct strbuf *out)
{
	const struct folded_stack **sorted = folded_sorted(set);

	for (int i = 0; i < set->stacks.count; i++)
		strbuf_printf(out, "%s %llu\n", sorted[i]->frames,
			      (unsigned long long)sorted[i]->count);
	free(sorted);
}

void folded_free(struct folded_set *set)
{
	for (int i = 0; i < set->stacks.count; i++)
		free(set->stacks.items[i].frames);
	free(set->stacks.items);
	free(set->index);
	memset(set, 0, sizeof(*set));
}

/* ---- lines and frames ---- */

struct folded_line {
	const char *text;
	size_t length;
	int number;         /* 1-based */
};

struct folded_cursor {
	const char *text;
	size_t length;
	size_t at;
	int number;
};

static bool folded_next_line(struct folded_cursor *cursor, struct folded_line *line)
{
	const char *end;

	if (cursor->at >= cursor->length)
		return false;
	line->text = cursor->text + cursor->at;
	end = memchr(line->text, '\n', cursor->length - cursor->at);
	line->length = end ? (size_t)(end - line->text) : cursor->length - cursor->at;
	cursor->at += line->length + 1;
	line->number = ++cursor->number;
	if (line->length && line->text[line->length - 1] == '\r')
		line->length--;
	return true;
}

static bool folded_blank(const struct folded_line *line)
{
	for (size_t i = 0; i < line->length; i++) {
		if (!isspace((unsigned char)line->text[i]))
			return false;
	}
	return true;
}

static bool folded_indented(const struct folded_line *line)
{
	return line->length && (line->text[0] == ' ' || line->text[0] == '\t');
}

static void folded_trim(const char **text, size_t *length)
{
	while (*length && isspace((unsigned char)**text)) {
		(*text)++;
		(*length)--;
	}
	while (*length && isspace((unsigned char)(*text)[*length - 1]))
		(*length)--;
}

static bool folded_all_hex(const char *text, size_t length)
{
	if (length > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
		text += 2;
		length -= 2;
	}
	if (!length)
		return false;
	for (size_t i = 0; i < length; i++) {
		if (!isxdigit((unsigned char)text[i]))
			return false;
	}
	return true;
}

/* Appends a name to the stack: ';' is the separator, so one inside a name
 * becomes ':'. */
static void folded_put_name(struct strbuf *out, const char *text, size_t length)
{
	folded_trim(&text, &length);
	if (out->length)
		strbuf_putc(out, ';');
	for (size_t i = 0; i < length; i++)
		strbuf_putc(out, text[i] == ';' ? ':' : text[i]);
}

/* Appends one frame: the offset stripped, and an address that names no
 * symbol ("0x7f3a...", as bpftrace prints one) or nothing at all shown as
 * "[unknown]". */
static void folded_put_frame(struct strbuf *out, const char *text, size_t length)
{
	const char *plus;

	folded_trim(&text, &length);
	plus = length ? memrchr(text, '+', length) : NULL;
	if (plus && plus > text && isdigit((unsigned char)plus[1]) &&
	    folded_all_hex(plus + 1, length - (size_t)(plus + 1 - text)))
		length = (size_t)(plus - text);
	if (!length || (length > 2 && text[0] == '0' && text[1] == 'x' &&
			folded_all_hex(text, length)))
		folded_put_name(out, "[unknown]", 9);
	else
		folded_put_name(out, text, length);
}

static int folded_overflow(int line, char **error)
{
	*error = xasprintf("line %d: the sample counts add up to more than %llu (2^63-1)", line,
			   (unsigned long long)FOLDED_TOTAL_MAX);
	return -EOVERFLOW;
}

/* ---- folded lines ---- */

static int folded_parse_lines(struct folded_set *set, struct folded_cursor *cursor, char **error)
{
	struct folded_line line;

	while (folded_next_line(cursor, &line)) {
		const char *text = line.text, *space;
		size_t length = line.length;
		char *frames, *end;
		unsigned long long count;

		folded_trim(&text, &length);
		if (!length)
			continue;
		space = memrchr(text, ' ', length);
		if (!space || !isdigit((unsigned char)space[1])) {
			*error = xasprintf("line %d is not a folded stack ('frame;frame COUNT')",
					   line.number);
			return -EINVAL;
		}
		errno = 0;
		count = strtoull(space + 1, &end, 10);
		if (end != text + length || errno) {
			*error = xasprintf("line %d: the sample count '%.*s' is not a whole number",
					   line.number, (int)(text + length - space - 1), space + 1);
			return -EINVAL;
		}
		length = (size_t)(space - text);
		folded_trim(&text, &length);
		frames = xstrndup(text, length);
		folded_take(set, frames, count);
		if (set->overflow)
			return folded_overflow(line.number, error);
	}
	return 0;
}

/* ---- perf script ---- */

/* "55d0c2a1513d hot+0x14 (/tmp/prog)": the symbol between the address and
 * the last parenthesised dso; C++ symbols hold parentheses of their own. */
static void folded_put_perf_frame(struct strbuf *out, const char *text, size_t length)
{
	const char *symbol, *dso;

	folded_trim(&text, &length);
	symbol = memchr(text, ' ', length);
	if (!symbol) {
		folded_put_frame(out, "", 0);
		return;
	}
	length -= (size_t)(symbol - text);
	text = symbol;
	if (length && text[length - 1] == ')') {
		int depth = 0;

		for (dso = text + length - 1; dso > text; dso--) {
			depth += *dso == ')' ? 1 : *dso == '(' ? -1 : 0;
			if (depth == 0)
				break;
		}
		length = (size_t)(dso - text);
	}
	folded_trim(&text, &length);
	if (length == 9 && memcmp(text, "[unknown]", 9) == 0)
		length = 0;
	folded_put_frame(out, text, length);
}

/* The comm is what comes before the pid (or pid/tid); it may hold spaces. */
static void folded_put_perf_comm(struct strbuf *out, const char *text, size_t length)
{
	size_t at = 0, comm_end = length;

	while (at < length) {
		size_t start, end;

		while (at < length && isspace((unsigned char)text[at]))
			at++;
		start = at;
		while (at < length && !isspace((unsigned char)text[at]))
			at++;
		end = at;
		if (start > 0 && end > start && isdigit((unsigned char)text[start]) &&
		    strspn(text + start, "0123456789/") >= end - start) {
			comm_end = start;
			break;
		}
	}
	folded_put_name(out, text, comm_end);
}

struct folded_frames {
	VEC(const char *) texts;
	VEC(size_t) lengths;
};

static void folded_frames_push(struct folded_frames *frames, const char *text, size_t length)
{
	vec_push(&frames->texts, text);
	vec_push(&frames->lengths, length);
}

static void folded_frames_free(struct folded_frames *frames)
{
	free(frames->texts.items);
	free(frames->lengths.items);
	memset(frames, 0, sizeof(*frames));
}

/* Frames come innermost first; folded stacks list them outermost first. */
static void folded_put_reversed(struct strbuf *out, const struct folded_frames *frames,
				void (*put)(struct strbuf *, const char *, size_t))
{
	for (int i = frames->texts.count - 1; i >= 0; i--)
		put(out, frames->texts.items[i], frames->lengths.items[i]);
}

static void folded_add_perf_sample(struct folded_set *set, struct strbuf *stack,
				   const struct folded_frames *frames)
{
	folded_put_reversed(stack, frames, folded_put_perf_frame);
	folded_add(set, stack->data ? stack->data : "", 1);
}

static int folded_parse_perf(struct folded_set *set, struct folded_cursor *cursor, char **error)
{
	struct folded_frames frames = { 0 };
	struct strbuf stack;
	struct folded_line line;
	bool in_sample = false;

	strbuf_init(&stack);
	for (;;) {
		bool more = folded_next_line(cursor, &line);

		if (!more || folded_blank(&line)) {
			if (in_sample)
				folded_add_perf_sample(set, &stack, &frames);
			in_sample = false;
			if (!more)
				break;
			continue;
		}
		if (line.text[0] == '#')
			continue;
		if (folded_indented(&line)) {
			if (!in_sample) {
				*error = xasprintf("line %d: a perf script frame without a sample line "
						   "above it", line.number);
				strbuf_free(&stack);
				folded_frames_free(&frames);
				return -EINVAL;
			}
			folded_frames_push(&frames, line.text, line.length);
			continue;
		}
		if (in_sample)
			folded_add_perf_sample(set, &stack, &frames);
		strbuf_reset(&stack);
		frames.texts.count = frames.lengths.count = 0;
		folded_put_perf_comm(&stack, line.text, line.length);
		in_sample = true;
	}
	strbuf_free(&stack);
	folded_frames_free(&frames);
	return 0;
}

/* ---- bpftrace map output ---- */

struct folded_element {
	bool stack;
	const char *text;           /* a scalar's text */
	size_t length;
	struct folded_frames frames; /* a stack's frames, innermost first */
};

struct folded_entry {
	char *map;                  /* "@" or "@name" */
	VEC(struct folded_element) elements;
	uint64_t count;
	int line;                   /* where its "]: N" is */
};

static void folded_entry_free(struct folded_entry *entry)
{
	for (int i = 0; i < entry->elements.count; i++)
		folded_frames_free(&entry->elements.items[i].frames);
	free(entry->elements.items);
	free(entry->map);
}

/* Splits the key text between "@map[" and "]: N" into its elements. */
static void folded_split_key(struct folded_entry *entry, const char *key, size_t length)
{
	size_t at = 0;

	for (;;) {
		struct folded_element element = { 0 };

		if (at < length && key[at] == '\n') {
			element.stack = true;
			at++;
			while (at < length && (key[at] == ' ' || key[at] == '\t')) {
				const char *end = memchr(key + at, '\n', length - at);
				size_t line_end = end ? (size_t)(end - key) : length;

				folded_frames_push(&element.frames, key + at, line_end - at);
				at = line_end < length ? line_end + 1 : length;
			}
		} else {
			const char *comma = NULL;

			for (size_t i = at; i + 1 < length && !comma; i++) {
				if (key[i] == ',' && key[i + 1] == ' ')
					comma = key + i;
			}
			element.text = key + at;
			element.length = comma ? (size_t)(comma - key) - at : length - at;
			/* bpftrace prints an empty stack as nothing at all */
			element.stack = element.length == 0;
			at += element.length;
		}
		vec_push(&entry->elements, element);
		if (at + 1 < length && key[at] == ',' && key[at + 1] == ' ') {
			at += 2;
			continue;
		}
		if (at + 1 == length && key[at] == ',')
			at++;
		break;
	}
}

static bool folded_kernel_frame(const char *text, size_t length)
{
	static const char *const kernel_prefixes[] = {
		"entry_SYSCALL", "do_syscall_64", "asm_", "ret_from_fork", "__x64_sys_",
		"x64_sys_call", "secondary_startup_64", "common_startup_64", "start_kernel",
		"cpu_startup_entry", "do_idle", "__schedule", "schedule", "__irq_exit_rcu",
		"irq_exit", "sysvec_", "handle_softirqs", "__do_softirq", "kthread",
		"worker_thread", "el0_", "el1_", "invoke_syscall", "ret_from_fork_asm",
		"0xffff",
	};

	folded_trim(&text, &length);
	for (size_t i = 0; i < sizeof(kernel_prefixes) / sizeof(kernel_prefixes[0]); i++) {
		size_t prefix = strlen(kernel_prefixes[i]);

		if (length >= prefix && memcmp(text, kernel_prefixes[i], prefix) == 0)
			return true;
	}
	return length == 16 && folded_all_hex(text, length) && strncmp(text, "ffff", 4) == 0;
}

/* Which stack positions of map hold kernel stacks (bit i: position i).
 * Each position is judged by the share of its frames that look like the
 * kernel's: a user stack can hold a frame or two that do (a function of
 * its own called "schedule", a stray kernel-range word), a kernel stack is
 * full of them. With several stacks, the one that looks most like the
 * kernel's is; when none looks like it at all, the first of two is, as in
 * the usual `@[kstack, ustack, comm]`. entries are one map's. */
static uint64_t folded_kernel_positions(struct folded_entry *const *entries, int count)
{
	int64_t kernel_frames[64] = { 0 }, frames[64] = { 0 };
	uint64_t stacks = 0;
	int best = -1;

	for (int i = 0; i < count; i++) {
		for (int j = 0; j < entries[i]->elements.count && j < 64; j++) {
			const struct folded_element *element = &entries[i]->elements.items[j];

			if (!element->stack)
				continue;
			stacks |= 1ull << j;
			for (int k = 0; k < element->frames.texts.count; k++) {
				frames[j]++;
				kernel_frames[j] += folded_kernel_frame(element->frames.texts.items[k],
									element->frames.lengths.items[k]);
			}
		}
	}
	for (int j = 0; j < 64; j++) {
		/* compare kernel_frames[j] / frames[j] without dividing */
		if (kernel_frames[j] && (best < 0 || (__int128)kernel_frames[j] * frames[best] >
						     (__int128)kernel_frames[best] * frames[j]))
			best = j;
	}
	if (best >= 0 && (__builtin_popcountll(stacks) > 1 || kernel_frames[best] * 4 >= frames[best]))
		return 1ull << best;
	if (best < 0 && __builtin_popcountll(stacks) == 2)
		return stacks & -stacks;
	return 0;
}

/* A map's frame: "hot+22", or in ustack(perf)/kstack(perf) mode
 * "55d2c70c014f hot+38 (/tmp/prog)", which reads like a perf script frame. */
static void folded_put_map_frame(struct strbuf *out, const char *text, size_t length)
{
	const char *space;

	folded_trim(&text, &length);
	space = memchr(text, ' ', length);
	if (space && text[length - 1] == ')' && folded_all_hex(text, (size_t)(space - text)))
		folded_put_perf_frame(out, text, length);
	else
		folded_put_frame(out, text, length);
}

static void folded_add_entry(struct folded_set *set, const struct folded_entry *entry,
			     uint64_t kernel, struct strbuf *stack)
{
	strbuf_reset(stack);
	for (int pass = 0; pass < 3; pass++) {
		for (int j = 0; j < entry->elements.count; j++) {
			const struct folded_element *element = &entry->elements.items[j];
			bool is_kernel = j < 64 && (kernel >> j & 1);

			if (pass == 0 && !element->stack)
				folded_put_name(stack, element->text, element->length);
			/* user frames before kernel frames, each outermost first */
			if (element->stack && (pass == 1) == !is_kernel && pass > 0)
				folded_put_reversed(stack, &element->frames, folded_put_map_frame);
		}
	}
	folded_add(set, stack->data ? stack->data : "", entry->count);
}

/* An entry's last line ends in "]: N". */
static bool folded_entry_end(const struct folded_line *line, uint64_t *count, size_t *bracket)
{
	const char *text = line->text;
	size_t length = line->length, digits = 0;

	folded_trim(&text, &length);
	while (digits < length && isdigit((unsigned char)text[length - 1 - digits]))
		digits++;
	if (!digits || length < digits + 3 || memcmp(text + length - digits - 3, "]: ", 3) != 0)
		return false;
	*count = strtoull(text + length - digits, NULL, 10);
	*bracket = (size_t)(text + length - digits - 3 - line->text);
	return true;
}

/* By map name, then in the order printed (qsort is not stable). */
static int folded_compare_entries(const void *a, const void *b)
{
	const struct folded_entry *left = *(struct folded_entry *const *)a;
	const struct folded_entry *right = *(struct folded_entry *const *)b;
	int order = strcmp(left->map, right->map);

	return order ? order : (left > right) - (left < right);
}

static int folded_parse_map(struct folded_set *set, struct folded_cursor *cursor, char **error)
{
	VEC(struct folded_entry) entries = { 0 };
	struct folded_entry **by_map;
	struct folded_line line;
	struct strbuf stack;
	uint64_t kernel = 0;
	int status = 0;

	while (folded_next_line(cursor, &line)) {
		struct folded_entry entry = { 0 };
		const char *open = memchr(line.text, '[', line.length);
		const char *key;
		int first = line.number;
		size_t bracket;

		if (line.text[0] != '@' || !open)
			continue;
		key = open + 1;
		entry.map = xstrndup(line.text, (size_t)(open - line.text));
		while (!folded_entry_end(&line, &entry.count, &bracket)) {
			if (!folded_next_line(cursor, &line)) {
				*error = xasprintf("line %d: the map entry starting here has no "
						   "closing ']: COUNT'", first);
				folded_entry_free(&entry);
				status = -EINVAL;
				goto out;
			}
		}
		folded_split_key(&entry, key, (size_t)(line.text + bracket - key));
		entry.line = line.number;
		vec_push(&entries, entry);
	}
	/* each map is judged once over all its entries: grouped by name (a
	 * map printed twice, or two maps interleaved, still form one group),
	 * so the cost is a sort, not a pass over every entry per map */
	by_map = xcalloc(entries.count + 1, sizeof(*by_map));
	for (int i = 0; i < entries.count; i++)
		by_map[i] = &entries.items[i];
	qsort(by_map, entries.count, sizeof(*by_map), folded_compare_entries);
	strbuf_init(&stack);
	for (int i = 0, group = 0; i < entries.count && !status; i++) {
		const struct folded_entry *entry = by_map[i];
		bool has_stack = false;

		if (i == group) {
			while (group < entries.count && strcmp(by_map[group]->map, entry->map) == 0)
				group++;
			kernel = folded_kernel_positions(by_map + i, group - i);
		}
		for (int j = 0; j < entry->elements.count; j++)
			has_stack |= entry->elements.items[j].stack;
		/* maps of other values printed beside the stacks are not samples */
		if (has_stack)
			folded_add_entry(set, entry, kernel, &stack);
		if (set->overflow)
			status = folded_overflow(entry->line, error);
	}
	strbuf_free(&stack);
	free(by_map);
out:
	for (int i = 0; i < entries.count; i++)
		folded_entry_free(&entries.items[i]);
	free(entries.items);
	return status;
}

enum folded_form {
	FOLDED_LINES,       /* a;b;c 12 */
	FOLDED_MAP,         /* @[stack, comm]: 12 */
	FOLDED_PERF,        /* perf script */
};

/* The form is told by the first lines that carry something: a map entry
 * starts with '@' (bpftrace's "Attaching N probes..." may come before it);
 * perf script starts with a sample line followed by an indented frame. */
static enum folded_form folded_detect(const char *text, size_t length)
{
	struct folded_cursor cursor = { .text = text, .length = length };
	struct folded_line line, previous = { 0 };
	int seen = 0;

	while (folded_next_line(&cursor, &line) && seen < 20) {
		if (folded_blank(&line) || line.text[0] == '#')
			continue;
		if (line.text[0] == '@' && memchr(line.text, '[', line.length))
			return FOLDED_MAP;
		if (folded_indented(&line) && previous.text && !folded_indented(&previous))
			return FOLDED_PERF;
		previous = line;
		seen++;
	}
	return FOLDED_LINES;
}

int folded_parse(struct folded_set *set, const char *text, size_t length, char **error)
{
	struct folded_cursor cursor = { .text = text, .length = length };

	switch (folded_detect(text, length)) {
	case FOLDED_MAP:
		return folded_parse_map(set, &cursor, error);
	case FOLDED_PERF:
		return folded_parse_perf(set, &cursor, error);
	case FOLDED_LINES:
		break;
	}
	return folded_parse_lines(set, &cursor, error);
}
