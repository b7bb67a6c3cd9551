/* SPDX-License-Identifier: Apache-2.0 */
/*
 * print_stacks(): a map keyed by stacks, printed the way BCC's profile,
 * offcputime and stackcount print theirs.
 *
 * Each entry of the map becomes a list of parts in key order: a stack's
 * frames outermost first (the kernel stores them innermost first), or a
 * plain key field (comm, pid) as its text. Two layouts come from that list:
 *  - folded (`comm;outermost;...;innermost COUNT`, what flamegraph.pl,
 *    speedscope and inferno read): the stacks and string fields joined by
 *    ';' in key order, so a program keyed @[comm, pid, ustack, kstack] gets
 *    BCC's `comm;user frames;kernel frames` (integer fields such as the pid
 *    are left out, as BCC leaves them out); lines sorted by text.
 *  - blocks (BCC's default): the stacks in reverse key order, each frame
 *    innermost first on its own line, then a `-  comm (pid)` line made of
 *    the other fields, then the count; blocks sorted by count, the biggest
 *    last, where a terminal leaves it in view.
 * With --svg, the folded stacks become a flame graph in that file instead
 * (picture.c). Frames are function names without offsets; one that cannot be named is
 * `[unknown]`. A stack the kernel could not take (its id an error other
 * than -EFAULT, which only says there was no stack of that kind) is shown
 * as `[Missed Kernel Stack]` / `[Missed User Stack]`.
 */
#include "runtime/snapshot.h"
#include "runtime/symbols.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One stack or one plain field of an entry's key. */
struct stack_part {
	bool is_stack;
	bool is_kernel;
	bool is_text;         /* a string field (comm): part of the folded line */
	/* a stack: its frames' names, outermost first, owned by the symbol
	 * caches (or constants); a field: its text alone, in text */
	VEC(const char *) frames;
	char *text;
};

struct stack_entry {
	VEC(struct stack_part) parts;
	uint64_t count;
	char *folded;         /* the folded line without its count */
	char *identity;       /* folded plus the fields it leaves out (the pid): what tells
			       * two blocks apart; only made for blocks and JSON */
};

/*
 * Every stack the map's keys name, read from the stack map once: keys share
 * stacks (one kernel stack under many user stacks, one user stack in many
 * threads), and each read is a system call.
 */
struct stack_read {
	int depth;
	int64_t id;
	int count;        /* frames, or -errno */
	size_t first;     /* index of its first frame in the table's frames */
	bool noted;       /* its frames are on the list to name */
	uint64_t noted_pid; /* a user stack's: for that process (the last one) */
};

struct stack_table {
	VEC(struct stack_read) stacks; /* each once */
	VEC(uint64_t) frames;
	/* open-addressing index of stacks (position + 1; 0 is free): every
	 * key field looks its stack up twice */
	int *index;
	size_t index_mask;
};

static size_t stack_slot(int depth, int64_t id, size_t mask)
{
	return (size_t)((((uint64_t)depth << 32) ^ (uint64_t)id) * 0x9e3779b97f4a7c15ull >> 24) & mask;
}

static void stack_table_index(struct stack_table *table)
{
	size_t size = 16;

	while (size < 2 * (size_t)table->stacks.count)
		size *= 2;
	table->index = xcalloc(size, sizeof(*table->index));
	table->index_mask = size - 1;
	for (int i = 0; i < table->stacks.count; i++) {
		const struct stack_read *read = &table->stacks.items[i];
		size_t slot = stack_slot(read->depth, read->id, table->index_mask);
		while (table->index[slot])
			slot = (slot + 1) & table->index_mask;
		table->index[slot] = i + 1;
	}
}

static int compare_stack_reads(const void *pa, const void *pb)
{
	const struct stack_read *a = pa, *b = pb;

	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* (like strchr, the answer may be changed through) */
static struct stack_read *stack_table_find(const struct stack_table *table, int depth, int64_t id)
{
	if (!table->index)
		return NULL;
	for (size_t slot = stack_slot(depth, id, table->index_mask); table->index[slot];
	     slot = (slot + 1) & table->index_mask) {
		struct stack_read *read = &table->stacks.items[table->index[slot] - 1];
		if (read->depth == depth && read->id == id)
			return read;
	}
	return NULL;
}

/* Calls visit for each stack field of each entry of the snapshot. */
static void stack_foreach_field(const struct map_desc *map, const struct map_snapshot *snap,
				void (*visit)(const struct type *type,
					      const struct stack_value *value, void *context),
				void *context)
{
	const struct type *key_type = map->key_type;
	int field_count = map->key_is_multi ? key_type->field_count : 1;

	for (int i = 0; i < snap->count; i++) {
		for (int f = 0; f < field_count; f++) {
			const struct type *type = map->key_is_multi ? key_type->fields[f].type
								    : key_type;
			if (type->kind != TYPE_STACK)
				continue;
			struct stack_value value;
			memcpy(&value, snapshot_key(snap, i) +
				       (map->key_is_multi ? key_type->fields[f].offset : 0), sizeof(value));
			visit(type, &value, context);
		}
	}
}

static void stack_note_read(const struct type *type, const struct stack_value *value,
			    void *context)
{
	struct stack_table *table = context;

	if (value->stack_id >= 0)
		vec_push(&table->stacks, ((struct stack_read){ .depth = type->stack_depth,
								.id = value->stack_id }));
}

/* Every frame of the map's stacks, to be named at once. */
struct stack_addresses {
	const struct stack_table *table;
	VEC(uint64_t) kernel;
	VEC(struct symbols_user_address) user;
};

static void stack_note_frames(const struct type *type, const struct stack_value *value,
			      void *context)
{
	struct stack_addresses *frames = context;
	struct stack_read *read;

	if (value->stack_id < 0 ||
	    !(read = stack_table_find(frames->table, type->stack_depth, value->stack_id)))
		return;
	/* a kernel stack is named once whatever the process; a user stack
	 * once per process, nearly: keys of one stack in many processes come
	 * in no order */
	if (read->noted && (!type->is_user_pointer || read->noted_pid == value->pid))
		return;
	read->noted = true;
	read->noted_pid = value->pid;
	for (int n = 0; n < read->count; n++) {
		uint64_t address = frames->table->frames.items[read->first + (size_t)n];
		if (type->is_user_pointer)
			vec_push(&frames->user, ((struct symbols_user_address){
							.pid = (pid_t)value->pid, .address = address }));
		else
			vec_push(&frames->kernel, address);
	}
}

/* Reads every stack once, then names every frame at once: kernel frames in
 * one read of kallsyms instead of holding its whole table
 * (symbols_kernel_names), user frames in one read of each object's symbols
 * keeping only the names they need (symbols_user_batch). */
static void stack_table_read(struct stack_table *table, const struct map_desc *map,
			     const struct map_snapshot *snap)
{
	uint64_t frames[SYMBOLS_MAX_FRAMES];

	stack_foreach_field(map, snap, stack_note_read, table);
	if (table->stacks.count == 0)
		return;
	qsort(table->stacks.items, (size_t)table->stacks.count, sizeof(*table->stacks.items),
	      compare_stack_reads);
	int unique = 0;
	for (int i = 0; i < table->stacks.count; i++) {
		struct stack_read *read = &table->stacks.items[i];
		if (unique && compare_stack_reads(&table->stacks.items[unique - 1], read) == 0)
			continue;
		read->count = symbols_read_stack(read->depth, read->id, frames);
		read->first = (size_t)table->frames.count;
		for (int n = 0; n < read->count; n++)
			vec_push(&table->frames, frames[n]);
		table->stacks.items[unique++] = *read;
	}
	table->stacks.count = unique;
	stack_table_index(table);

	struct stack_addresses frames_seen = { .table = table };
	stack_foreach_field(map, snap, stack_note_frames, &frames_seen);
	const char **names = xcalloc((size_t)frames_seen.kernel.count + 1, sizeof(*names));
	symbols_kernel_names(frames_seen.kernel.items, frames_seen.kernel.count, names);
	free(names);
	free(frames_seen.kernel.items);
	symbols_user_batch(frames_seen.user.items, frames_seen.user.count);
	free(frames_seen.user.items);
}

static void stack_table_free(struct stack_table *table)
{
	free(table->index);
	free(table->stacks.items);
	free(table->frames.items);
}

static const char *stack_frame_name(bool is_kernel, uint64_t pid, uint64_t address)
{
	struct symbol_lookup symbol;
	const char *name = NULL;

	if (is_kernel)
		symbols_kernel_names(&address, 1, &name); /* named by stack_table_read() */
	else if (symbols_user((pid_t)pid, address, &symbol) == 0)
		name = symbol.name;
	return name ? name : "[unknown]";
}

static void stack_part_of_stack(struct stack_part *part, const struct type *type,
				const unsigned char *data, const struct stack_table *table)
{
	struct stack_value value;

	memcpy(&value, data, sizeof(value));
	part->is_stack = true;
	part->is_kernel = !type->is_user_pointer;
	const struct stack_read *read = value.stack_id < 0 ? NULL
					: stack_table_find(table, type->stack_depth, value.stack_id);
	int count = value.stack_id < 0 ? (int)value.stack_id : read ? read->count : -ENOENT;
	if (count == -EFAULT)
		return;
	if (count < 0) {
		vec_push(&part->frames, part->is_kernel ? "[Missed Kernel Stack]"
							: "[Missed User Stack]");
		return;
	}
	for (int i = count - 1; i >= 0; i--)
		vec_push(&part->frames, stack_frame_name(part->is_kernel, value.pid,
							 table->frames.items[read->first + (size_t)i]));
}

/* A frame as printed: kernel frames of folded lines may carry `_[k]`. */
static void stack_put_frame(struct strbuf *sb, const struct stack_part *part, int f, int style)
{
	strbuf_puts(sb, part->frames.items[f]);
	if (part->is_kernel && (style & STACK_STYLE_ANNOTATE) && (style & STACK_STYLE_FOLDED))
		strbuf_puts(sb, "_[k]");
}

/* What building an entry needs for a moment: its parts and its line, kept
 * from one entry to the next so that thousands of entries do not each
 * allocate and grow their own. */
struct stack_scratch {
	VEC(struct stack_part) parts;  /* the capacity of each one's frames kept too */
	struct strbuf text;            /* plain fields' texts, one after another */
	VEC(size_t) text_at;           /* where each part's text starts in text */
	struct strbuf line;
};

static void stack_scratch_free(struct stack_scratch *scratch)
{
	for (int i = 0; i < scratch->parts.count; i++)
		free(scratch->parts.items[i].frames.items);
	free(scratch->parts.items);
	strbuf_free(&scratch->text);
	free(scratch->text_at.items);
	strbuf_free(&scratch->line);
}

/* The entry's folded line (and identity, for blocks and JSON); its parts
 * are kept only for blocks and JSON, which print them one by one. */
static void stack_entry_build(struct stack_entry *entry, struct stack_scratch *scratch,
			      const struct map_desc *map, const unsigned char *key,
			      const struct stack_table *table, int style, bool for_blocks)
{
	const struct type *key_type = map->key_type;
	int field_count = map->key_is_multi ? key_type->field_count : 1;

	while (scratch->parts.count < field_count)
		vec_push(&scratch->parts, ((struct stack_part){ 0 }));
	strbuf_reset(&scratch->text);
	scratch->text_at.count = 0;
	for (int i = 0; i < field_count; i++) {
		const struct type *type = map->key_is_multi ? key_type->fields[i].type : key_type;
		const unsigned char *data = key + (map->key_is_multi ? key_type->fields[i].offset : 0);
		struct stack_part *part = &scratch->parts.items[i];
		*part = (struct stack_part){ .frames = { .items = part->frames.items,
							 .capacity = part->frames.capacity } };
		vec_push(&scratch->text_at, scratch->text.length);
		if (type->kind == TYPE_STACK) {
			stack_part_of_stack(part, type, data, table);
		} else {
			format_value(&scratch->text, type, data, false);
			strbuf_putc(&scratch->text, '\0');
			part->is_text = type->kind == TYPE_STRING;
		}
	}
	/* the texts are in place now that the buffer has stopped moving */
	for (int i = 0; i < field_count; i++)
		if (scratch->parts.items[i].frames.count == 0 && !scratch->parts.items[i].is_stack)
			vec_push(&scratch->parts.items[i].frames,
				 scratch->text.data + scratch->text_at.items[i]);

	struct strbuf *line = &scratch->line;
	strbuf_reset(line);
	bool user_seen = false;
	for (int i = 0; i < field_count; i++) {
		const struct stack_part *part = &scratch->parts.items[i];
		if (!part->is_stack && !part->is_text)
			continue;
		if ((style & STACK_STYLE_DELIMIT) && part->is_stack && part->is_kernel && user_seen)
			strbuf_puts(line, line->length ? ";-" : "-");
		user_seen |= part->is_stack && !part->is_kernel;
		for (int f = 0; f < part->frames.count; f++) {
			if (line->length)
				strbuf_putc(line, ';');
			stack_put_frame(line, part, f, style);
		}
	}
	entry->folded = xstrndup(line->data ? line->data : "", line->length);
	if (!for_blocks)
		return;
	for (int i = 0; i < field_count; i++) {
		const struct stack_part *part = &scratch->parts.items[i];
		if (!part->is_stack && !part->is_text)
			strbuf_printf(line, "\n%s", part->frames.items[0]);
	}
	entry->identity = xstrndup(line->data, line->length);
	for (int i = 0; i < field_count; i++) {
		struct stack_part copy = scratch->parts.items[i];
		memset(&copy.frames, 0, sizeof(copy.frames));
		if (!copy.is_stack)
			copy.text = xstrdup(scratch->parts.items[i].frames.items[0]);
		for (int f = 0; f < scratch->parts.items[i].frames.count; f++)
			vec_push(&copy.frames, copy.is_stack ? scratch->parts.items[i].frames.items[f]
							     : copy.text);
		vec_push(&entry->parts, copy);
	}
}

static void stack_entry_free(struct stack_entry *entry)
{
	for (int i = 0; i < entry->parts.count; i++) {
		free(entry->parts.items[i].text);
		free(entry->parts.items[i].frames.items);
	}
	free(entry->parts.items);
	free(entry->folded);
	free(entry->identity);
}

static int compare_folded(const void *pa, const void *pb)
{
	const struct stack_entry *a = pa, *b = pb;
	return strcmp(a->folded, b->folded);
}

static int compare_identity(const void *pa, const void *pb)
{
	const struct stack_entry *a = pa, *b = pb;
	return strcmp(a->identity, b->identity);
}

static int compare_count(const void *pa, const void *pb)
{
	const struct stack_entry *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	return strcmp(a->folded, b->folded);
}

/* One block: the stacks innermost first, then `-  comm (pid)`, then the count. */
static void stack_write_block(struct strbuf *sb, const struct stack_entry *entry, int style)
{
	const struct stack_part *previous = NULL;

	for (int i = entry->parts.count - 1; i >= 0; i--) {
		const struct stack_part *part = &entry->parts.items[i];
		if (!part->is_stack)
			continue;
		if ((style & STACK_STYLE_DELIMIT) && previous && previous->is_kernel &&
		    !part->is_kernel && previous->frames.count && part->frames.count)
			strbuf_puts(sb, "    --\n");
		for (int f = part->frames.count - 1; f >= 0; f--) {
			strbuf_puts(sb, "    ");
			stack_put_frame(sb, part, f, style);
			strbuf_putc(sb, '\n');
		}
		previous = part;
	}
	/* the plain fields in key order: the first (comm) as is, the others
	 * (pid) in parentheses */
	struct strbuf fields;
	strbuf_init(&fields);
	for (int i = 0, n = 0; i < entry->parts.count; i++) {
		if (entry->parts.items[i].is_stack)
			continue;
		strbuf_printf(&fields, n++ ? " (%s)" : "%s", entry->parts.items[i].frames.items[0]);
	}
	if (fields.length)
		strbuf_printf(sb, "    %-16s %s\n", "-", fields.data);
	strbuf_printf(sb, "        %llu\n\n", (unsigned long long)entry->count);
	strbuf_free(&fields);
}

static void stack_write_json(struct strbuf *sb, const struct stack_entry *entry, int style)
{
	struct strbuf frame;
	int n = 0;

	strbuf_init(&frame);
	strbuf_puts(sb, "{\"frames\": [");
	for (int i = 0; i < entry->parts.count; i++) {
		for (int f = 0; f < entry->parts.items[i].frames.count; f++) {
			strbuf_reset(&frame);
			stack_put_frame(&frame, &entry->parts.items[i], f, style);
			if (n++)
				strbuf_puts(sb, ", ");
			format_json_string(sb, frame.data, frame.length);
		}
	}
	strbuf_free(&frame);
	strbuf_printf(sb, "], \"count\": %llu}\n", (unsigned long long)entry->count);
}

int print_tool_stacks(const struct output *out, const struct map_desc *map,
		      const struct event_desc *event)
{
	struct map_snapshot snap;
	struct stack_table table = { 0 };
	int err = snapshot_read(map, &snap);

	if (err)
		return err;
	/* stacks that differ only in addresses within the same functions
	 * read the same: one entry, their counts summed. Folded lines leave
	 * the pid out, as BCC's do; blocks (and JSON) keep processes apart. */
	bool folded = event->stack_style & STACK_STYLE_FOLDED;
	bool flamegraph = out->picture && out->picture->request.kind == PICTURE_FLAMEGRAPH;
	bool by_line = (folded && !out->json) || flamegraph;

	stack_table_read(&table, map, &snap);
	struct stack_scratch scratch = { 0 };
	struct stack_entry *entries = xcalloc(snap.count + 1, sizeof(*entries));
	for (int i = 0; i < snap.count; i++) {
		stack_entry_build(&entries[i], &scratch, map, snapshot_key(&snap, i), &table,
				  event->stack_style, !by_line);
		entries[i].count = snapshot_fold(&snap, map->value_type, snapshot_value(&snap, i));
	}
	int read = snap.count;
	stack_scratch_free(&scratch);
	stack_table_free(&table);
	snapshot_free(&snap);

	if (flamegraph) {
		/* the set merges equal lines itself, and the graph sorts them */
		struct folded_set set = { 0 };
		for (int i = 0; i < read; i++)
			folded_take(&set, entries[i].folded, entries[i].count);
		free(entries);
		picture_flamegraph(out->picture, &set);
		folded_free(&set);
		return 0;
	}
	qsort(entries, read, sizeof(*entries), by_line ? compare_folded : compare_identity);
	int count = 0;
	for (int i = 0; i < read; i++) {
		if (count && strcmp(by_line ? entries[count - 1].folded : entries[count - 1].identity,
				    by_line ? entries[i].folded : entries[i].identity) == 0) {
			entries[count - 1].count += entries[i].count;
			stack_entry_free(&entries[i]);
		} else {
			entries[count++] = entries[i];
		}
	}
	if (!folded)
		qsort(entries, count, sizeof(*entries), compare_count);

	/* written an entry at a time: the whole text would be one more copy
	 * of every line */
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < count; i++) {
		strbuf_reset(&sb);
		if (out->json)
			stack_write_json(&sb, &entries[i], event->stack_style);
		else if (folded)
			strbuf_printf(&sb, "%s %llu\n", entries[i].folded,
				      (unsigned long long)entries[i].count);
		else
			stack_write_block(&sb, &entries[i], event->stack_style);
		stack_entry_free(&entries[i]);
		if (sb.length)
			fwrite(sb.data, 1, sb.length, out->file);
	}
	free(entries);
	fflush(out->file);
	strbuf_free(&sb);
	return 0;
}
