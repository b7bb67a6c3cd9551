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
	VEC(char *) frames;   /* a stack: outermost first; a field: its text alone */
};

struct stack_entry {
	VEC(struct stack_part) parts;
	uint64_t count;
	char *folded;         /* the folded line without its count */
	char *identity;       /* folded plus the fields it leaves out (the pid): what tells
			       * two blocks apart */
};

static void stack_frame_name(struct strbuf *sb, bool is_kernel, uint64_t pid, uint64_t address)
{
	struct symbol_lookup symbol;
	const char *name = NULL;
	if (is_kernel)
		symbols_kernel_names(&address, 1, &name); /* named by stack_name_kernel_frames() */
	else if (symbols_user((pid_t)pid, address, &symbol) == 0)
		name = symbol.name;
	strbuf_puts(sb, name ? name : "[unknown]");
}

/* Every kernel frame of the map named at once: two reads of kallsyms
 * instead of holding its whole table (symbols_kernel_names). */
static void stack_name_kernel_frames(const struct map_desc *map, const struct map_snapshot *snap)
{
	const struct type *key_type = map->key_type;
	int field_count = map->key_is_multi ? key_type->field_count : 1;
	VEC(uint64_t) addresses = { 0 };
	uint64_t frames[SYMBOLS_MAX_FRAMES];

	for (int i = 0; i < snap->count; i++) {
		for (int f = 0; f < field_count; f++) {
			const struct type *type = map->key_is_multi ? key_type->fields[f].type : key_type;
			if (type->kind != TYPE_STACK || type->is_user_pointer)
				continue;
			struct stack_value value;
			memcpy(&value, snapshot_key(snap, i) +
				       (map->key_is_multi ? key_type->fields[f].offset : 0), sizeof(value));
			int count = value.stack_id < 0 ? 0
				    : symbols_read_stack(type->stack_depth, value.stack_id, frames);
			for (int n = 0; n < count; n++)
				vec_push(&addresses, frames[n]);
		}
	}
	const char **names = xcalloc((size_t)addresses.count + 1, sizeof(*names));
	symbols_kernel_names(addresses.items, addresses.count, names);
	free(names);
	free(addresses.items);
}

static void stack_part_of_stack(struct stack_part *part, const struct type *type,
				const unsigned char *data, int style)
{
	struct stack_value value;
	uint64_t frames[SYMBOLS_MAX_FRAMES];

	memcpy(&value, data, sizeof(value));
	part->is_stack = true;
	part->is_kernel = !type->is_user_pointer;
	int count = value.stack_id < 0 ? (int)value.stack_id
					: symbols_read_stack(type->stack_depth, value.stack_id, frames);
	if (count == -EFAULT)
		return;
	if (count < 0) {
		vec_push(&part->frames, xstrdup(part->is_kernel ? "[Missed Kernel Stack]"
								: "[Missed User Stack]"));
		return;
	}
	for (int i = count - 1; i >= 0; i--) {
		struct strbuf sb;
		strbuf_init(&sb);
		stack_frame_name(&sb, part->is_kernel, value.pid, frames[i]);
		if (part->is_kernel && (style & STACK_STYLE_ANNOTATE) && (style & STACK_STYLE_FOLDED))
			strbuf_puts(&sb, "_[k]");
		vec_push(&part->frames, strbuf_release(&sb));
	}
}

static void stack_entry_build(struct stack_entry *entry, const struct map_desc *map,
			      const unsigned char *key, int style)
{
	const struct type *key_type = map->key_type;
	int field_count = map->key_is_multi ? key_type->field_count : 1;

	for (int i = 0; i < field_count; i++) {
		const struct type *type = map->key_is_multi ? key_type->fields[i].type : key_type;
		const unsigned char *data = key + (map->key_is_multi ? key_type->fields[i].offset : 0);
		struct stack_part part = { 0 };
		if (type->kind == TYPE_STACK) {
			stack_part_of_stack(&part, type, data, style);
		} else {
			struct strbuf sb;
			strbuf_init(&sb);
			format_value(&sb, type, data, false);
			vec_push(&part.frames, strbuf_release(&sb));
			part.is_text = type->kind == TYPE_STRING;
		}
		vec_push(&entry->parts, part);
	}

	struct strbuf line;
	strbuf_init(&line);
	bool user_seen = false;
	for (int i = 0; i < entry->parts.count; i++) {
		const struct stack_part *part = &entry->parts.items[i];
		if (!part->is_stack && !part->is_text)
			continue;
		if ((style & STACK_STYLE_DELIMIT) && part->is_stack && part->is_kernel && user_seen)
			strbuf_puts(&line, line.length ? ";-" : "-");
		user_seen |= part->is_stack && !part->is_kernel;
		for (int f = 0; f < part->frames.count; f++) {
			if (line.length)
				strbuf_putc(&line, ';');
			strbuf_puts(&line, part->frames.items[f]);
		}
	}
	entry->folded = strbuf_release(&line);
	strbuf_init(&line);
	strbuf_puts(&line, entry->folded);
	for (int i = 0; i < entry->parts.count; i++)
		if (!entry->parts.items[i].is_stack && !entry->parts.items[i].is_text)
			strbuf_printf(&line, "\n%s", entry->parts.items[i].frames.items[0]);
	entry->identity = strbuf_release(&line);
}

static void stack_entry_free(struct stack_entry *entry)
{
	for (int i = 0; i < entry->parts.count; i++) {
		for (int f = 0; f < entry->parts.items[i].frames.count; f++)
			free(entry->parts.items[i].frames.items[f]);
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
		for (int f = part->frames.count - 1; f >= 0; f--)
			strbuf_printf(sb, "    %s\n", part->frames.items[f]);
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

static void stack_write_json(struct strbuf *sb, const struct stack_entry *entry)
{
	strbuf_puts(sb, "{\"frames\": [");
	int n = 0;
	for (int i = 0; i < entry->parts.count; i++) {
		for (int f = 0; f < entry->parts.items[i].frames.count; f++) {
			const char *frame = entry->parts.items[i].frames.items[f];
			if (n++)
				strbuf_puts(sb, ", ");
			format_json_string(sb, frame, strlen(frame));
		}
	}
	strbuf_printf(sb, "], \"count\": %llu}\n", (unsigned long long)entry->count);
}

int print_tool_stacks(const struct output *out, const struct map_desc *map,
		      const struct event_desc *event)
{
	struct map_snapshot snap;
	int err = snapshot_read(map, &snap);

	if (err)
		return err;
	stack_name_kernel_frames(map, &snap);
	struct stack_entry *entries = xcalloc(snap.count + 1, sizeof(*entries));
	for (int i = 0; i < snap.count; i++) {
		stack_entry_build(&entries[i], map, snapshot_key(&snap, i), event->stack_style);
		entries[i].count = snapshot_fold(&snap, map->value_type, snapshot_value(&snap, i));
	}
	/* stacks that differ only in addresses within the same functions
	 * read the same: one entry, their counts summed. Folded lines leave
	 * the pid out, as BCC's do; blocks (and JSON) keep processes apart. */
	bool folded = event->stack_style & STACK_STYLE_FOLDED;
	bool by_line = (folded && !out->json) ||
		       (out->picture && out->picture->request.kind == PICTURE_FLAMEGRAPH);
	qsort(entries, snap.count, sizeof(*entries), by_line ? compare_folded : compare_identity);
	int count = 0;
	for (int i = 0; i < snap.count; i++) {
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

	if (out->picture && out->picture->request.kind == PICTURE_FLAMEGRAPH) {
		struct folded_set set = { 0 };
		for (int i = 0; i < count; i++) {
			folded_add(&set, entries[i].folded, entries[i].count);
			stack_entry_free(&entries[i]);
		}
		picture_flamegraph(out->picture, &set);
		folded_free(&set);
		count = 0;
	}

	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < count; i++) {
		if (out->json)
			stack_write_json(&sb, &entries[i]);
		else if (folded)
			strbuf_printf(&sb, "%s %llu\n", entries[i].folded,
				      (unsigned long long)entries[i].count);
		else
			stack_write_block(&sb, &entries[i], event->stack_style);
		stack_entry_free(&entries[i]);
	}
	free(entries);
	snapshot_free(&snap);
	if (sb.length)
		fwrite(sb.data, 1, sb.length, out->file);
	fflush(out->file);
	strbuf_free(&sb);
	return 0;
}
