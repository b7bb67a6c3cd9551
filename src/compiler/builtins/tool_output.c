/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Builtin functions, family: Output for the ready-made tools: rows with JSON field names, lines
 * shown only when their message matches (trace -f), and whole maps printed the way BCC's tools
 * print them (histograms, top-N tables, stacks).
 */
#include "family.h"

#include "../../aggregations/aggregation.h"

/*
 * The JSON names of a row: a string literal of `expected` space-separated
 * names, normalized to single spaces. NULL (and an error) otherwise.
 */
static char *check_field_names(struct sema *sema, struct node *call, struct node *names,
			       int expected, const char *what)
{
	if (names->kind != NODE_STRING) {
		sema_error(sema, names->loc, "%s() needs a string literal of field names here", call->name);
		return NULL;
	}
	struct strbuf sb;
	int count = 0;
	strbuf_init(&sb);
	for (const char *p = names->string_value; *p;) {
		size_t length = strcspn(p, " \t\n");
		if (length) {
			if (count++)
				strbuf_putc(&sb, ' ');
			strbuf_append(&sb, p, length);
			p += length;
		} else {
			p++;
		}
	}
	/* a last name "args..." gathers the remaining values into one JSON array */
	bool gathers = sb.length > 3 && strcmp(sb.data + sb.length - 3, "...") == 0;
	if (gathers ? count > expected : count != expected) {
		sema_error(sema, names->loc, "%s() has %d field name%s but %d %s%s", call->name, count,
			 count == 1 ? "" : "s", expected, what, expected == 1 ? "" : "s");
		strbuf_free(&sb);
		return NULL;
	}
	return strbuf_release(&sb);
}

/* Default JSON names: k0 k1 ... for key fields, then the given tail. */
static char *default_field_names(int key_fields, const char *tail)
{
	struct strbuf sb;
	strbuf_init(&sb);
	for (int i = 0; i < key_fields; i++)
		strbuf_printf(&sb, "%sk%d", i ? " " : "", i);
	if (tail && *tail)
		strbuf_printf(&sb, "%s%s", key_fields ? " " : "", tail);
	return strbuf_release(&sb);
}

/* A literal format checked against the types of values the runtime supplies. */
static bool check_format_types(struct sema *sema, struct node *call, struct node *format,
			       struct type **types, int count, const char *what)
{
	if (format->kind != NODE_STRING) {
		sema_error(sema, format->loc, "%s() needs a string literal as its format", call->name);
		return false;
	}
	struct format_pieces pieces = { 0 };
	char *error = NULL;
	int error_offset = 0;
	if (format_parse(format->string_value, &pieces, &error, &error_offset) < 0) {
		sema_error(sema, format->loc, "%s", error);
		free(error);
		return false;
	}
	bool ok = true;
	if (pieces.conversion_count != count) {
		sema_error(sema, format->loc, "%s() format has %d conversion%s for %d %s", call->name,
			 pieces.conversion_count, pieces.conversion_count == 1 ? "" : "s", count, what);
		ok = false;
	}
	for (int i = 0, n = 0; ok && i < pieces.count; i++) {
		if (!pieces.items[i].is_conversion)
			continue;
		char *mismatch = format_check_arg(&pieces.items[i], types[n++]);
		if (mismatch) {
			sema_error(sema, format->loc, "conversion %d (%s): %s", n, pieces.items[i].text,
				 mismatch);
			free(mismatch);
			ok = false;
		}
	}
	format_pieces_free(&pieces);
	return ok;
}

/* The fields of a map's key, as print_top and histogram labels pass them. */
static int key_fields(const struct map_desc *map, struct type **fields, int room)
{
	if (!map->key_type)
		return 0;
	if (!map->key_is_multi) {
		fields[0] = map->key_type;
		return 1;
	}
	int count = map->key_type->field_count < room ? map->key_type->field_count : room;
	for (int i = 0; i < count; i++)
		fields[i] = map->key_type->fields[i].type;
	return count;
}

#define MAX_ROW_FIELDS 32

/* row("a b", "format", a, b): printf in text, {"a": .., "b": ..} in JSON. */
static void check_row(struct sema *sema, struct node *call)
{
	struct node *names = call->args;
	call->type = type_void();
	sema_check_expr(sema, names);
	struct event_desc *event = sema_check_format_call(sema, call, names->next, EVENT_ROW);
	if (!event)
		return;
	char *field_names = check_field_names(sema, call, names, ast_list_length(names->next->next),
					      "value");
	event = &sema->program->events.items[call->event_id - 1];
	event->field_names = field_names;
}

/*
 * The needles of printf_matching() and row_matching(): a string literal, or
 * a tuple of them, the k-th to be found in the k-th part of the line marked
 * off by a pair of \x1f bytes in the format ("" finds anything). Kept in the
 * event joined by \x1f, for the runtime. NULL (and an error) otherwise.
 */
static char *check_needles(struct sema *sema, struct node *call, struct node *needles,
			   const char *format)
{
	bool tuple = needles->kind == NODE_TUPLE;
	struct strbuf joined;
	int count = 0, marks = 0;
	for (const char *p = format; (p = strchr(p, MESSAGE_MARK)); p++)
		marks++;
	strbuf_init(&joined);
	for (struct node *n = tuple ? needles->args : needles; n; n = tuple ? n->next : NULL) {
		if (n->kind != NODE_STRING || memchr(n->string_value, MESSAGE_MARK, n->string_length)) {
			sema_error(sema, n->loc, "%s() needs a string literal to match (or a tuple of "
				   "them)", call->name);
			strbuf_free(&joined);
			return NULL;
		}
		sema_check_expr(sema, n);
		if (count++)
			strbuf_putc(&joined, MESSAGE_MARK);
		strbuf_puts(&joined, n->string_value);
	}
	if (marks != 2 * count) {
		sema_error(sema, needles->loc, "%s() needs each matched part of its format between "
			   "two \\x1f bytes: %d part%s for %d text%s to match", call->name, marks / 2,
			   marks / 2 == 1 ? "" : "s", count, count == 1 ? "" : "s");
		strbuf_free(&joined);
		return NULL;
	}
	return strbuf_release(&joined);
}

/* printf_matching(needles, "format", args...): printf, for a line shown
 * only when each marked part of it holds its needle (trace -f); the runtime
 * decides, once the line is formatted. */
static void check_printf_matching(struct sema *sema, struct node *call)
{
	struct node *needles = call->args;
	call->type = type_void();
	struct event_desc *event = sema_check_format_call(sema, call, needles->next, EVENT_PRINTF);
	if (!event)
		return;
	char *match = check_needles(sema, call, needles, event->format);
	event = &sema->program->events.items[call->event_id - 1];
	event->match = match;
}

/* row_matching(needles, "names", "format", args...): row(), shown only when
 * the text line's marked parts hold the needles (execsnoop -n, -l); in JSON
 * too, where the text is formatted only to be matched. */
static void check_row_matching(struct sema *sema, struct node *call)
{
	struct node *needles = call->args;
	struct node *names = needles->next;
	call->type = type_void();
	sema_check_expr(sema, names);
	struct event_desc *event = sema_check_format_call(sema, call, names->next, EVENT_ROW);
	if (!event)
		return;
	char *match = check_needles(sema, call, needles, event->format);
	char *field_names = check_field_names(sema, call, names, ast_list_length(names->next->next),
					      "value");
	event = &sema->program->events.items[call->event_id - 1];
	event->match = match;
	event->field_names = field_names;
}

/* A whole map for print_top and the histogram printers; NULL when not one. */
static struct map_desc *check_printed_map(struct sema *sema, struct node *call)
{
	struct node *map = call->args;
	if (map->kind != NODE_MAP || map->args) {
		sema_error(sema, map->loc, "%s() needs a whole map, like %s(@m, ...)", call->name,
			 call->name);
		return NULL;
	}
	return sema_map_for(sema, map);
}

static bool check_literal(struct sema *sema, struct node *call, struct node *arg, const char *what)
{
	sema_check_expr(sema, arg);
	if (arg->kind == NODE_STRING)
		return true;
	sema_error(sema, arg->loc, "%s()'s %s must be a string literal", call->name, what);
	return false;
}

/* print_log2_hist(@m, "unit"[, "label format"[, "names"[, "after"]]]) and the linear one. */
static void check_print_hist(struct sema *sema, struct node *call, const struct aggregation *kind,
			     enum event_kind event_kind)
{
	call->type = type_void();
	struct map_desc *map = check_printed_map(sema, call);
	struct node *unit = call->args->next;
	struct node *label = unit->next;
	struct node *names = label ? label->next : NULL;
	struct node *after = names ? names->next : NULL;
	if (!map || !check_literal(sema, call, unit, "unit") ||
	    (label && !check_literal(sema, call, label, "label format")) ||
	    (names && !check_literal(sema, call, names, "field names")) ||
	    (after && !check_literal(sema, call, after, "text after each histogram")))
		return;
	if (!map->value_type)
		return; /* the first pass may not know it yet */
	if (map->value_type->aggregation != kind) {
		sema_error(sema, call->args->loc, "%s() needs a map of %s() values; %s holds %s",
			 call->name, kind->function.name, map->name, type_name(map->value_type));
		return;
	}
	struct type *fields[MAX_ROW_FIELDS];
	int field_count = key_fields(map, fields, MAX_ROW_FIELDS);
	if (field_count && !label) {
		sema_error(sema, call->loc, "%s() of keyed map %s needs a label format for each key, "
			 "like \"disk = %%s\\n\"", call->name, map->name);
		return;
	}
	/* a keyless map's label is plain text, printed before its histogram */
	if (!field_count && label && strchr(label->string_value, '%') &&
	    !check_format_types(sema, call, label, fields, 0, "key fields"))
		return;
	if (label && !check_format_types(sema, call, label, fields, field_count,
					 field_count == 1 ? "key field" : "key fields"))
		return;
	char *field_names = names && names->string_value[0]
				    ? check_field_names(sema, call, names, field_count, "key field")
				    : default_field_names(field_count, NULL);
	if (!field_names)
		return;
	struct event_desc *event = sema_new_event(sema, call, event_kind);
	event->map_id = map->id;
	event->unit = xstrdup(unit->string_value);
	event->format = xstrdup(label ? label->string_value : "");
	event->trailer = xstrdup(after ? after->string_value : "");
	event->field_names = field_names;
	for (int i = 0; i < field_count; i++)
		sema_event_add_arg(event, fields[i], ARG_PLAIN, NULL);
	event->record_size = 8; /* the record is the index alone; args describe a row */
}

static void check_print_log2_hist(struct sema *sema, struct node *call)
{
	check_print_hist(sema, call, &aggregation_hist, EVENT_PRINT_LOG2_HIST);
}

static void check_print_linear_hist(struct sema *sema, struct node *call)
{
	check_print_hist(sema, call, &aggregation_lhist, EVENT_PRINT_LINEAR_HIST);
}

/* The integer print_top passes for a map's value; NULL when it has none. */
static struct type *top_column_type(const struct type *value)
{
	/* an aggregation that reads as one number (count, sum, min, max, avg) */
	if (type_is_aggregation(value))
		return value->aggregation->read ? type_int(8, value->is_signed) : NULL;
	return value->kind == TYPE_INT ? (struct type *)value : NULL;
}

/*
 * print_stacks(@m[, folded[, annotate[, delimit]]]): a map keyed by stacks
 * (and comm, pid, ...) counted or summed, printed as profile and offcputime
 * print it: BCC's blocks, or folded lines for flame graphs. The three flags
 * are constants (a tool's options), so the layout is known when compiling.
 */
static void check_print_stacks(struct sema *sema, struct node *call)
{
	call->type = type_void();
	struct map_desc *map = check_printed_map(sema, call);
	int style = 0;
	static const int bits[] = { STACK_STYLE_FOLDED, STACK_STYLE_ANNOTATE, STACK_STYLE_DELIMIT };
	int i = 0;
	for (struct node *flag = call->args->next; flag; flag = flag->next, i++) {
		sema_check_expr(sema, flag);
		if (!sema_is_int_constant(flag)) {
			sema_error(sema, flag->loc, "print_stacks()' flags (folded, annotate, delimit) "
				 "must be constant integers");
			return;
		}
		if (flag->const_value)
			style |= bits[i];
	}
	if (!map || !map->value_type)
		return; /* the first pass may not know it yet */
	if (!top_column_type(map->value_type)) {
		sema_error(sema, call->args->loc, "print_stacks() needs a map of count(), sum() or "
			 "integer values; %s holds %s", map->name, type_name(map->value_type));
		return;
	}
	struct type *fields[MAX_ROW_FIELDS];
	int field_count = key_fields(map, fields, MAX_ROW_FIELDS);
	bool has_stack = false;
	for (int f = 0; f < field_count; f++)
		has_stack |= fields[f]->kind == TYPE_STACK;
	if (!has_stack) {
		sema_error(sema, call->args->loc, "print_stacks() needs a map keyed by kstack or ustack, "
			 "like @[kstack, ustack, comm]");
		return;
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_PRINT_STACKS);
	event->map_id = map->id;
	event->stack_style = style;
	event->record_size = 8;
}

/* print_top(@m, top, ["names",] "format"[, @m2, ...]) */
static void check_print_top(struct sema *sema, struct node *call)
{
	call->type = type_void();
	struct map_desc *map = check_printed_map(sema, call);
	struct node *top = call->args->next;
	struct node *format = top->next;
	if (!map || !format) {
		if (map)
			sema_error(sema, call->loc, "print_top() needs a format after top");
		return;
	}
	struct node *names = NULL;
	if (format->next && format->next->kind == NODE_STRING) {
		names = format;
		format = format->next;
	}
	sema_check_expr(sema, top);
	if (!sema_is_int_constant(top) || (int64_t)top->const_value < 0) {
		sema_error(sema, top->loc, "print_top()'s top must be a constant integer (0: all rows)");
		return;
	}
	if ((names && !check_literal(sema, call, names, "field names")) ||
	    !check_literal(sema, call, format, "format"))
		return;
	struct type *columns[MAX_ROW_FIELDS + 2];
	int column_count = 0;
	VEC(int) extras = { 0 };
	struct strbuf default_tail;
	strbuf_init(&default_tail);
	strbuf_puts(&default_tail, "value");
	bool ok = map->value_type != NULL;
	if (ok) {
		column_count = key_fields(map, columns, MAX_ROW_FIELDS);
		columns[column_count] = top_column_type(map->value_type);
		if (!columns[column_count++]) {
			sema_error(sema, call->args->loc, "print_top() ranks maps of count(), sum(), min(), "
				 "max(), avg() or integers; %s holds %s", map->name,
				 type_name(map->value_type));
			ok = false;
		}
	}
	for (struct node *extra = format->next; extra; extra = extra->next) {
		if (extra->kind != NODE_MAP || extra->args) {
			sema_error(sema, extra->loc, "print_top()'s further columns must be whole maps");
			ok = false;
			continue;
		}
		struct map_desc *other = sema_map_for(sema, extra);
		if (!ok || !other->value_type)
			continue;
		struct type *column = top_column_type(other->value_type);
		if (!column) {
			sema_error(sema, extra->loc, "print_top() columns come from maps of count(), sum(), "
				 "min(), max(), avg() or integers; %s holds %s", other->name,
				 type_name(other->value_type));
			ok = false;
		} else if (!type_equal(map->key_type, other->key_type) ||
			   map->key_is_multi != other->key_is_multi) {
			sema_error(sema, extra->loc, "%s is keyed by %s, but %s by %s", other->name,
				 other->key_type ? type_name(other->key_type) : "nothing", map->name,
				 map->key_type ? type_name(map->key_type) : "nothing");
			ok = false;
		} else if (column_count < MAX_ROW_FIELDS + 2) {
			columns[column_count++] = column;
			vec_push(&extras, other->id);
			strbuf_printf(&default_tail, " %s", other->name[1] ? other->name + 1 : "value");
		}
	}
	/* one conversion fewer than the columns, with further maps: the first
	 * map only orders the rows (tcptop -s sent sorts by another column
	 * than its first) */
	bool order_only = false;
	struct format_pieces pieces = { 0 };
	char *parse_error = NULL;
	int parse_offset = 0;
	int key_count = column_count - 1 - extras.count;
	if (ok && extras.count > 0 &&
	    format_parse(format->string_value, &pieces, &parse_error, &parse_offset) == 0 &&
	    pieces.conversion_count == column_count - 1) {
		order_only = true;
		memmove(&columns[key_count], &columns[key_count + 1],
			(size_t)(column_count - key_count - 1) * sizeof(columns[0]));
		column_count--;
		const char *tail = strchr(default_tail.data, ' ');
		memmove(default_tail.data, tail + 1, strlen(tail + 1) + 1);
	}
	format_pieces_free(&pieces);
	free(parse_error);
	char *field_names = NULL;
	if (ok && check_format_types(sema, call, format, columns, column_count, "columns (key "
				     "fields, then the values)"))
		field_names = names ? check_field_names(sema, call, names, column_count, "column")
				    : default_field_names(key_count, default_tail.data);
	strbuf_free(&default_tail);
	if (!field_names) {
		free(extras.items);
		return;
	}
	struct event_desc *event = sema_new_event(sema, call, EVENT_PRINT_TOP);
	event->map_id = map->id;
	event->top = (int)top->const_value;
	event->format = xstrdup(format->string_value);
	event->field_names = field_names;
	event->extra_map_ids = extras.items;
	event->extra_map_count = extras.count;
	event->top_order_only = order_only;
	for (int i = 0; i < column_count; i++)
		sema_event_add_arg(event, columns[i], ARG_PLAIN, NULL);
	event->record_size = 8; /* the record is the index alone; args describe a row */
}

/* row() and printf_matching(): like printf, the values after the names
 * (the text to match) and the format. */
static struct value generate_row(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, call->args->next->next);
	return value_none();
}

static struct value generate_printf_matching(struct codegen *gen, struct node *call)
{
	return generate_row(gen, call);
}

static struct value generate_row_matching(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, call->args->next->next->next);
	return value_none();
}

/* The map printers for tools: the record is the event index; user space reads the maps. */
static struct value send_map_print(struct codegen *gen, struct node *call)
{
	gen_send_event(gen, call, NULL);
	return value_none();
}

static struct value generate_print_log2_hist(struct codegen *gen, struct node *call) { return send_map_print(gen, call); }

static struct value generate_print_linear_hist(struct codegen *gen, struct node *call) { return send_map_print(gen, call); }

static struct value generate_print_top(struct codegen *gen, struct node *call) { return send_map_print(gen, call); }

static struct value generate_print_stacks(struct codegen *gen, struct node *call) { return send_map_print(gen, call); }

const struct function_def builtins_tool_output[] = {
	{ FUNCTION(row, 2, -1) },
	{ FUNCTION(printf_matching, 2, -1) },
	{ FUNCTION(row_matching, 3, -1) },
	{ FUNCTION(print_log2_hist, 2, 5) },
	{ FUNCTION(print_linear_hist, 2, 5) },
	{ FUNCTION(print_top, 3, -1) },
	{ FUNCTION(print_stacks, 1, 4) },
	{ 0 },
};
