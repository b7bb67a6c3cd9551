/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Turning bytes from the kernel into text: printf-style events and single
 * values.
 *
 * format_event() receives a ring-buffer record (a u64 event index, then the
 * arguments at the offsets the compiler chose) and the event's description.
 * It splits the format into pieces once per distinct format string and
 * renders each conversion by handing the C library a conversion built from
 * the user's flags, width and precision, with an argument of the C type the
 * length modifier names. So "%d" of 2^32+5 prints 5 and "%x" of -1 prints
 * ffffffff, exactly as C (and bpftrace, which also calls snprintf) would.
 *
 * format_value() is how a value looks inside a map key, a map value, a tuple
 * or print(): integers in decimal, strings up to their NUL, tuples as
 * "(1, abc)" (JSON: [1,"abc"]), ntop() addresses in their usual notation,
 * stacks one frame a line after a newline (the frames are looked up in the
 * stack map and named by symbols.c only now, at print time), ksym()/usym()
 * as a bare function name, buf() with non-printable bytes as \xNN, arrays
 * as "[1,2,3]".
 *
 * Integers are 8 bytes, sign-extended, everywhere the compiler lays data out
 * (map keys and values, tuple fields, records in the ring buffer); only the
 * fields of kernel structs (TYPE_RECORD) and the elements of arrays keep
 * their natural sizes.
 */
#include "runtime/runtime.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/names.h"
#include "common/printf_format.h"
#include "runtime/symbols.h"

/* ---- reading values ---- */

static uint64_t format_read_u64(const void *data)
{
	uint64_t value;

	memcpy(&value, data, sizeof(value));
	return value;
}

/*
 * Reads an integer of `size` bytes (a kernel struct field) and widens it
 * to 64 bits the way its signedness says.
 */
static uint64_t format_read_sized(const void *data, int size, bool is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v;
		memcpy(&v, data, 1);
		return is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, data, 2);
		return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, data, 4);
		return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default:
		return format_read_u64(data);
	}
}

/* ---- JSON strings ---- */

void format_json_string(struct strbuf *sb, const char *text, size_t length)
{
	strbuf_putc(sb, '"');
	for (size_t i = 0; i < length; i++) {
		unsigned char c = (unsigned char)text[i];
		switch (c) {
		case '"':
			strbuf_puts(sb, "\\\"");
			break;
		case '\\':
			strbuf_puts(sb, "\\\\");
			break;
		case '\n':
			strbuf_puts(sb, "\\n");
			break;
		case '\r':
			strbuf_puts(sb, "\\r");
			break;
		case '\t':
			strbuf_puts(sb, "\\t");
			break;
		default:
			if (c < 0x20)
				strbuf_printf(sb, "\\u%04x", c);
			else
				strbuf_putc(sb, (char)c);
			break;
		}
	}
	strbuf_putc(sb, '"');
}

/*
 * An integer as text, or as JSON. JSON numbers are doubles to most readers,
 * so one a double cannot hold exactly (beyond 2^53, most of them) is written
 * as a string of its digits, as current bpftrace writes it (RFC 8259, 6).
 */
void format_number(struct strbuf *sb, uint64_t value, bool is_signed, bool json)
{
	char digits[24];

	if (is_signed)
		snprintf(digits, sizeof(digits), "%lld", (long long)(int64_t)value);
	else
		snprintf(digits, sizeof(digits), "%llu", (unsigned long long)value);
	/* the range checks keep the conversions back defined (2^63 rounds up) */
	bool exact;
	if (is_signed) {
		double d = (double)(int64_t)value;
		exact = d < 0x1p63 && (int64_t)d == (int64_t)value;
	} else {
		double d = (double)value;
		exact = d < 0x1p64 && (uint64_t)d == value;
	}
	if (json && !exact)
		format_json_string(sb, digits, strlen(digits));
	else
		strbuf_puts(sb, digits);
}

/* ---- single values ---- */

static void format_inet(struct strbuf *sb, const void *data)
{
	uint64_t family = format_read_u64(data);
	const unsigned char *address = (const unsigned char *)data + 8;
	char text[INET6_ADDRSTRLEN];

	if (family == AF_INET) {
		if (inet_ntop(AF_INET, address, text, sizeof(text)))
			strbuf_puts(sb, text);
	} else if (family == AF_INET6) {
		if (inet_ntop(AF_INET6, address, text, sizeof(text)))
			strbuf_puts(sb, text);
	}
}

/* ---- stacks, symbols, buffers ---- */

/* bpftrace writes unresolved addresses with C++'s showbase, which gives
 * "0x1" but a bare "0". */
static void format_hex_address(struct strbuf *sb, uint64_t address)
{
	if (address == 0)
		strbuf_putc(sb, '0');
	else
		strbuf_printf(sb, "0x%llx", (unsigned long long)address);
}

static int format_lookup(uint64_t address, bool is_user, uint64_t pid, struct symbol_lookup *out)
{
	if (is_user)
		return symbols_user((pid_t)pid, address, out);
	return symbols_kernel(address, out);
}

void format_stack_frames(struct strbuf *sb, const struct type *type, uint64_t pid,
			 const uint64_t *frames, int count, int indent)
{
	int depth = type->stack_depth > 0 ? type->stack_depth : SYMBOLS_MAX_FRAMES;
	bool is_user = type->is_user_pointer;

	if (count > depth)
		count = depth;
	strbuf_putc(sb, '\n');
	for (int i = 0; i < count; i++) {
		struct symbol_lookup symbol;
		bool known = format_lookup(frames[i], is_user, pid, &symbol) == 0;

		switch (type->stack_mode) {
		case STACK_MODE_RAW:
			strbuf_printf(sb, "%llx\n", (unsigned long long)frames[i]);
			continue;
		case STACK_MODE_PERF:
			strbuf_printf(sb, "\t%llx ", (unsigned long long)frames[i]);
			break;
		case STACK_MODE_BPFTRACE:
			strbuf_printf(sb, "%*s", indent, "");
			break;
		}
		if (known)
			strbuf_printf(sb, "%s+%llu", symbol.name, (unsigned long long)symbol.offset);
		else
			format_hex_address(sb, frames[i]);
		/* perf script names the object of user frames, not of kernel ones */
		if (type->stack_mode == STACK_MODE_PERF && is_user)
			strbuf_printf(sb, " (%s)", known ? symbol.module : "[unknown]");
		strbuf_putc(sb, '\n');
	}
}

void format_stack(struct strbuf *sb, const struct type *type, const void *data, int indent)
{
	struct stack_value stack;
	uint64_t frames[SYMBOLS_MAX_FRAMES];

	memcpy(&stack, data, sizeof(stack));
	int count = symbols_read_stack(type->stack_depth, stack.stack_id, frames);
	/* -EFAULT: there is no stack of that kind here (a kernel stack in a
	 * user-space probe); bpftrace prints nothing for it. Other failures
	 * (a full stack map, a hash collision) still deserve a line. */
	if (count == -EFAULT)
		return;
	if (count < 0) {
		strbuf_printf(sb, "\n%*s[unknown stack]\n", type->stack_mode == STACK_MODE_BPFTRACE ?
			      indent : 0, "");
		return;
	}
	format_stack_frames(sb, type, stack.pid, frames, count, indent);
}

static void format_symbol(struct strbuf *sb, const struct type *type, const void *data)
{
	struct symbol_value value;
	struct symbol_lookup symbol;

	memcpy(&value, data, sizeof(value));
	if (format_lookup(value.address, type->is_user_pointer, value.pid, &symbol) == 0)
		strbuf_puts(sb, symbol.name);
	else
		format_hex_address(sb, value.address);
}

void format_escaped(struct strbuf *sb, const void *data, size_t length)
{
	const unsigned char *bytes = data;

	for (size_t i = 0; i < length; i++) {
		if (bytes[i] >= 0x20 && bytes[i] < 0x7f)
			strbuf_putc(sb, (char)bytes[i]);
		else
			strbuf_printf(sb, "\\x%02x", bytes[i]);
	}
}

/* buf(): u64 length, then the bytes (the length never exceeds the room). */
static void format_buffer(struct strbuf *sb, const struct type *type, const void *data)
{
	uint64_t length = format_read_u64(data);
	uint64_t room = type->size > 8 ? (uint64_t)type->size - 8 : 0;

	format_escaped(sb, (const char *)data + 8, length < room ? length : room);
}

/* %rx and %rh: a buf()'s bytes (or a string's, up to its NUL) each as
 * \xNN, or as NN separated by spaces, as bpftrace prints them. */
static void format_hex_bytes(struct strbuf *sb, const struct type *type, const void *data, bool spaced)
{
	const unsigned char *bytes = data;
	size_t length;
	if (type->kind == TYPE_BUFFER) {
		uint64_t wanted = format_read_u64(data);
		uint64_t room = type->size > 8 ? (uint64_t)type->size - 8 : 0;
		length = (size_t)(wanted < room ? wanted : room);
		bytes += 8;
	} else {
		length = strnlen(data, (size_t)type->size);
	}
	for (size_t i = 0; i < length; i++)
		strbuf_printf(sb, spaced ? "%s%02x" : "%s\\x%02x", spaced && i ? " " : "", bytes[i]);
}

/* Text of a value that JSON shows as a string. */
static void format_as_json_string(struct strbuf *sb, const struct type *type, const void *data)
{
	struct strbuf text;

	strbuf_init(&text);
	format_value(&text, type, data, false);
	format_json_string(sb, text.data ? text.data : "", text.length);
	strbuf_free(&text);
}

static void format_timestamp(struct strbuf *sb, const char *format, uint64_t boot_ns);

/* Value text; `natural` means integers have their own size (struct fields). */
static void format_value_at(struct strbuf *sb, const struct type *type, const void *data,
			    bool json, bool natural)
{
	const char *bytes = data;

	switch (type->kind) {
	case TYPE_INT: {
		uint64_t raw = natural ? format_read_sized(data, type->size, type->is_signed)
				       : format_read_u64(data);
		const char *enumerator = type->enumeration && !json
			? type_enum_value_name(type->enumeration, (int64_t)raw) : NULL;
		if (type->strftime_format) {
			/* a strftime() value kept in a variable, map or tuple */
			struct strbuf text;
			strbuf_init(&text);
			format_timestamp(&text, type->strftime_format, raw);
			if (json)
				format_json_string(sb, text.data ? text.data : "", text.length);
			else
				strbuf_append(sb, text.data ? text.data : "", text.length);
			strbuf_free(&text);
		} else if (type->int_names) {
			char buf[INT_NAME_MAX];
			const char *name = type->int_names->name(type->int_names, (int64_t)raw, buf, sizeof(buf));
			if (json)
				format_json_string(sb, name, strlen(name));
			else
				strbuf_puts(sb, name);
		} else if (enumerator) {
			/* current bpftrace names enums in text, keeps numbers in JSON */
			strbuf_puts(sb, enumerator);
		} else if (type->is_bool) {
			strbuf_puts(sb, raw ? "true" : "false"); /* JSON's literals too */
		} else {
			format_number(sb, raw, type->is_signed, json);
		}
		break;
	}
	case TYPE_POINTER:
		/* hex, as current bpftrace prints addresses (0.17: signed decimal);
		 * JSON keeps the number */
		if (json)
			format_number(sb, format_read_u64(data), false, true);
		else
			strbuf_printf(sb, "0x%llx", (unsigned long long)format_read_u64(data));
		break;
	case TYPE_STRING: {
		size_t length = strnlen(bytes, type->size);
		if (json)
			format_json_string(sb, bytes, length);
		else
			strbuf_append(sb, bytes, length);
		break;
	}
	case TYPE_INET:
	case TYPE_STACK:
	case TYPE_SYMBOL:
	case TYPE_BUFFER:
		if (json)
			format_as_json_string(sb, type, data);
		else if (type->kind == TYPE_INET)
			format_inet(sb, data);
		else if (type->kind == TYPE_STACK)
			format_stack(sb, type, data, 8);
		else if (type->kind == TYPE_SYMBOL)
			format_symbol(sb, type, data);
		else
			format_buffer(sb, type, data);
		break;
	case TYPE_TUPLE:
		if (type->field_count > 0 && type->fields[0].name) {
			/* a record: { .a = 1, .b = x } as current bpftrace; a JSON object */
			strbuf_puts(sb, json ? "{" : "{ ");
			for (int i = 0; i < type->field_count; i++) {
				if (json)
					strbuf_printf(sb, "%s\"%s\": ", i ? ", " : "", type->fields[i].name);
				else
					strbuf_printf(sb, "%s.%s = ", i ? ", " : "", type->fields[i].name);
				format_value_at(sb, type->fields[i].type, bytes + type->fields[i].offset,
						json, natural);
			}
			strbuf_puts(sb, json ? "}" : " }");
			break;
		}
		strbuf_putc(sb, json ? '[' : '(');
		for (int i = 0; i < type->field_count; i++) {
			if (i)
				strbuf_puts(sb, json ? "," : ", ");
			format_value_at(sb, type->fields[i].type, bytes + type->fields[i].offset,
					json, natural);
		}
		strbuf_putc(sb, json ? ']' : ')');
		break;
	case TYPE_ARRAY: {
		/* "[127,0,0,1]" in text and JSON alike, as bpftrace prints arrays */
		int element_size = type->pointee ? type->pointee->size : 0;
		strbuf_putc(sb, '[');
		for (int i = 0; element_size && i < type->array_length; i++) {
			if (i)
				strbuf_putc(sb, ',');
			format_value_at(sb, type->pointee, bytes + i * element_size, json, true);
		}
		strbuf_putc(sb, ']');
		break;
	}
	case TYPE_RECORD:
		strbuf_puts(sb, json ? "{" : "{ ");
		for (int i = 0; i < type->field_count; i++) {
			const struct type_field *field = &type->fields[i];
			if (i)
				strbuf_puts(sb, ", ");
			if (json)
				strbuf_printf(sb, "\"%s\": ", field->name ? field->name : "");
			else
				strbuf_printf(sb, ".%s = ", field->name ? field->name : "");
			if (field->bitfield_bits) {
				/* the bytes it spans (a packed struct's may straddle its type's units) */
				int span = (field->bitfield_offset + field->bitfield_bits + 7) / 8;
				uint64_t word = 0;
				for (int b = span - 1; b >= 0; b--)
					word = word << 8 | (uint8_t)bytes[field->offset + b];
				word >>= field->bitfield_offset;
				if (field->bitfield_bits < 64)
					word &= (1ULL << field->bitfield_bits) - 1;
				strbuf_printf(sb, "%llu", (unsigned long long)word);
			} else {
				format_value_at(sb, field->type, bytes + field->offset, json, true);
			}
		}
		strbuf_puts(sb, json ? "}" : " }");
		break;
	default:
		/* Aggregations are printed by print.c; void and none have no text. */
		break;
	}
}

void format_value(struct strbuf *sb, const struct type *type, const void *data, bool json)
{
	format_value_at(sb, type, data, json, false);
}

/* ---- strftime ---- */

/*
 * Boot-time nanoseconds to wall-clock time. The offset between the two
 * clocks is taken once, so a run's timestamps stay ordered even if the wall
 * clock is stepped while tracing.
 */
static void format_boot_to_wall(uint64_t boot_ns, struct timespec *wall)
{
	static bool have_offset;
	static int64_t offset_ns;

	if (!have_offset) {
		struct timespec real, boot;
		clock_gettime(CLOCK_REALTIME, &real);
		clock_gettime(CLOCK_BOOTTIME, &boot);
		offset_ns = ((int64_t)real.tv_sec - boot.tv_sec) * 1000000000LL +
			    (real.tv_nsec - boot.tv_nsec);
		have_offset = true;
	}
	/* Unsigned, as bpftrace computes it: any u64 a program passes (up to
	 * 0xffffffffffffffff) wraps the way bpftrace's does instead of
	 * overflowing a signed sum. */
	uint64_t ns = boot_ns + (uint64_t)offset_ns;
	wall->tv_sec = (time_t)(ns / 1000000000ull);
	wall->tv_nsec = (long)(ns % 1000000000ull);
}

/*
 * strftime() with bpftrace's extension: %f is the microseconds of the
 * second, six digits. "%%f" stays a literal "%f" (bpftrace 0.17 replaced it
 * too, breaking the format).
 */
static void format_strftime_at(struct strbuf *sb, const char *format, const struct timespec *when)
{
	struct strbuf expanded;
	struct tm local;
	time_t seconds = when->tv_sec;

	strbuf_init(&expanded);
	for (const char *p = format; *p; p++) {
		if (p[0] == '%' && p[1] == '%') {
			strbuf_puts(&expanded, "%%");
			p++;
		} else if (p[0] == '%' && p[1] == 'f') {
			strbuf_printf(&expanded, "%06ld", (long)(when->tv_nsec / 1000));
			p++;
		} else {
			strbuf_putc(&expanded, *p);
		}
	}
	localtime_r(&seconds, &local);
	if (expanded.length) {
		size_t capacity = 256 + expanded.length * 4;
		char *text = xmalloc(capacity);
		size_t length = strftime(text, capacity, expanded.data, &local);
		strbuf_append(sb, text, length);
		free(text);
	}
	strbuf_free(&expanded);
}

/* Boot-time nanoseconds as strftime(format) shows them. */
static void format_timestamp(struct strbuf *sb, const char *format, uint64_t boot_ns)
{
	struct timespec wall;

	format_boot_to_wall(boot_ns, &wall);
	format_strftime_at(sb, format, &wall);
}

/* ---- printf-style events ---- */

/* Formats are parsed once and kept for the life of the process. */
static const struct format_pieces *format_pieces_for(const char *format)
{
	static VEC(struct { char *format; struct format_pieces pieces; bool ok; }) cache;

	for (int i = 0; i < cache.count; i++)
		if (strcmp(cache.items[i].format, format) == 0)
			return cache.items[i].ok ? &cache.items[i].pieces : NULL;

	struct format_pieces pieces;
	char *error = NULL;
	int error_offset;
	bool ok = format_parse(format, &pieces, &error, &error_offset) == 0;
	free(error);
	if (cache.count == cache.capacity) {
		cache.capacity = cache.capacity ? cache.capacity * 2 : 8;
		cache.items = xrealloc(cache.items, sizeof(*cache.items) * cache.capacity);
	}
	cache.items[cache.count].format = xstrdup(format);
	cache.items[cache.count].pieces = pieces;
	cache.items[cache.count].ok = ok;
	cache.count++;
	return ok ? &cache.items[cache.count - 1].pieces : NULL;
}

/*
 * Splits "%-08lld" into what goes before the length modifier ("%-08"),
 * the length modifier ("ll") and the conversion ('d').
 */
struct format_spec {
	char prefix[64];
	char length[3];
	char conversion;
};

static void format_split_spec(const char *text, struct format_spec *spec)
{
	size_t n = strlen(text);
	size_t end = n - 1; /* the conversion character */
	size_t length_start = end;

	while (length_start > 1 && strchr("hlzjt", text[length_start - 1]))
		length_start--;
	spec->conversion = text[end];
	size_t prefix_length = length_start < sizeof(spec->prefix) - 1 ? length_start
								       : sizeof(spec->prefix) - 1;
	memcpy(spec->prefix, text, prefix_length);
	spec->prefix[prefix_length] = '\0';
	size_t modifier_length = end - length_start;
	if (modifier_length > 2)
		modifier_length = 2;
	memcpy(spec->length, text + length_start, modifier_length);
	spec->length[modifier_length] = '\0';
}

static void format_string_conversion(struct strbuf *sb, const struct format_spec *spec,
				     const char *text)
{
	char conversion[80];

	snprintf(conversion, sizeof(conversion), "%ss", spec->prefix);
	strbuf_printf(sb, conversion, text);
}

static void format_integer_conversion(struct strbuf *sb, const struct format_spec *spec,
				      uint64_t value)
{
	char conversion[80];
	bool wide = spec->length[0] && spec->length[0] != 'h';
	char c = spec->conversion;

	switch (c) {
	case 'c':
		snprintf(conversion, sizeof(conversion), "%sc", spec->prefix);
		strbuf_printf(sb, conversion, (int)value);
		break;
	case 'p':
		snprintf(conversion, sizeof(conversion), "%sp", spec->prefix);
		strbuf_printf(sb, conversion, (void *)(uintptr_t)value);
		break;
	case 'd':
	case 'i':
		if (wide) {
			snprintf(conversion, sizeof(conversion), "%sll%c", spec->prefix, c);
			strbuf_printf(sb, conversion, (long long)value);
		} else {
			snprintf(conversion, sizeof(conversion), "%s%s%c", spec->prefix,
				 spec->length, c);
			strbuf_printf(sb, conversion, (int)value);
		}
		break;
	default: /* u x X o */
		if (wide) {
			snprintf(conversion, sizeof(conversion), "%sll%c", spec->prefix, c);
			strbuf_printf(sb, conversion, (unsigned long long)value);
		} else {
			snprintf(conversion, sizeof(conversion), "%s%s%c", spec->prefix,
				 spec->length, c);
			strbuf_printf(sb, conversion, (unsigned int)value);
		}
		break;
	}
}

/* strftime(fmt, nsecs) as a printf argument: the formatted wall-clock time. */
static void format_strftime_arg(struct strbuf *sb, const struct event_arg *arg, const char *data)
{
	format_timestamp(sb, arg->strftime_format ? arg->strftime_format : "", format_read_u64(data));
}

static void format_one_arg(struct strbuf *sb, const struct format_piece *piece,
			   const struct event_arg *arg, const char *record)
{
	struct format_spec spec;
	const char *data = record + arg->offset;
	size_t text_length = strlen(piece->text);
	char hex_style = piece->conversion == 'r' && text_length > 2 && piece->text[text_length - 2] == 'r'
			 ? piece->text[text_length - 1] : 0;

	if (hex_style) {
		/* %-12rx: the flags and width of a %s, the bytes in hex */
		char *plain = xstrndup(piece->text, text_length - 1);
		format_split_spec(plain, &spec);
		free(plain);
		struct strbuf text;
		strbuf_init(&text);
		format_hex_bytes(&text, arg->type, data, hex_style == 'h');
		format_string_conversion(sb, &spec, text.data ? text.data : "");
		strbuf_free(&text);
		return;
	}
	format_split_spec(piece->text, &spec);
	if (arg->conversion == ARG_STRFTIME) {
		struct strbuf text;
		strbuf_init(&text);
		format_strftime_arg(&text, arg, data);
		format_string_conversion(sb, &spec, text.data ? text.data : "");
		strbuf_free(&text);
		return;
	}

	if (type_is_integer_like(arg->type)) {
		uint64_t value = format_read_u64(data);
		char buf[INT_NAME_MAX];
		const struct int_names *names = arg->type->int_names;
		const char *enumerator = spec.conversion == 's' && arg->type->enumeration
			? type_enum_value_name(arg->type->enumeration, (int64_t)value) : NULL;
		if (spec.conversion == 's' && names)
			format_string_conversion(sb, &spec, names->name(names, (int64_t)value, buf, sizeof(buf)));
		else if (enumerator)
			format_string_conversion(sb, &spec, enumerator);
		else if (spec.conversion == 's' && arg->type->enumeration)
			/* a value no enumerator has: its number, as bpftrace */
			strbuf_printf(sb, "%lld", (long long)value);
		else if (spec.conversion == 's')
			strbuf_printf(sb, "%lld", (long long)value); /* rejected by the compiler */
		else
			format_integer_conversion(sb, &spec, value);
		return;
	}

	/* Strings, addresses and anything else: render the value, print it as %s. */
	struct strbuf text;
	strbuf_init(&text);
	if (spec.conversion == 'r' && arg->type->kind == TYPE_STRING)
		format_escaped(&text, data, strnlen(data, arg->type->size));
	else
		format_value(&text, arg->type, data, false);
	format_string_conversion(sb, &spec, text.data ? text.data : "");
	strbuf_free(&text);
}

/*
 * join(): args[0] is a string type covering join_count equal slots, each a
 * NUL-padded string; the first empty slot ends the list (the BPF side stops
 * copying at argv's NULL).
 */
static void format_join(struct strbuf *sb, const struct event_desc *event, const char *record)
{
	if (event->arg_count < 1 || event->args[0].type->kind != TYPE_STRING)
		return;
	const struct event_arg *arg = &event->args[0];
	int slots = event->join_count > 0 ? event->join_count : 1;
	int slot_size = arg->type->size / slots;
	const char *delimiter = event->format ? event->format : " ";

	for (int i = 0; i < slots && slot_size > 0; i++) {
		const char *slot = record + arg->offset + (size_t)i * slot_size;
		size_t length = strnlen(slot, slot_size);
		if (length == 0)
			break;
		if (i)
			strbuf_puts(sb, delimiter);
		strbuf_append(sb, slot, length);
	}
}

/* The index of row()'s gathering name ("args..." or, quoted, "\"args\"..."),
 * or -1 when there is none. */
static int gathered_from(const struct event_desc *event, bool *quoted)
{
	const char *names = event->kind == EVENT_ROW && event->field_names ? event->field_names : "";
	for (int i = 0; *names; i++) {
		size_t length = strcspn(names, " ");
		if (length > 3 && strncmp(names + length - 3, "...", 3) == 0) {
			*quoted = names[0] == '"';
			return i;
		}
		names += length;
		while (*names == ' ')
			names++;
	}
	return -1;
}

/*
 * The gathered values of a row in text, as libbpf-tools' execsnoop prints
 * its arguments: each one that is not an empty string (an unused slot),
 * followed by a space; quoted ("a\"b") for a quoted name.
 */
static void format_gathered(struct strbuf *sb, const struct event_desc *event, const char *bytes,
			    int from, bool quoted)
{
	for (int j = from; j < event->arg_count; j++) {
		const struct event_arg *arg = &event->args[j];
		if (arg->type->kind == TYPE_STRING && !*(bytes + arg->offset))
			continue;
		struct strbuf value;
		strbuf_init(&value);
		format_value(&value, arg->type, bytes + arg->offset, false);
		if (quoted)
			strbuf_putc(sb, '"');
		for (size_t k = 0; k < value.length; k++) {
			if (quoted && value.data[k] == '"')
				strbuf_putc(sb, '\\');
			strbuf_putc(sb, value.data[k]);
		}
		strbuf_puts(sb, quoted ? "\" " : " ");
		strbuf_free(&value);
	}
}

void format_event(struct strbuf *sb, const struct event_desc *event, const void *record)
{
	const char *bytes = record;

	switch (event->kind) {
	case EVENT_TIME: {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		format_strftime_at(sb, event->format ? event->format : "", &now);
		return;
	}
	case EVENT_JOIN:
		format_join(sb, event, bytes);
		return;
	case EVENT_PRINTF:
	case EVENT_SYSTEM:
	case EVENT_CAT:
	case EVENT_ROW:
	case EVENT_PRINT_TOP:
	case EVENT_PRINT_LOG2_HIST:
	case EVENT_PRINT_LINEAR_HIST:
		break;
	default:
		return;
	}

	const struct format_pieces *pieces = format_pieces_for(event->format ? event->format : "");
	if (!pieces) {
		/* The compiler rejects such formats; show it rather than nothing. */
		strbuf_puts(sb, event->format);
		return;
	}
	bool quoted = false;
	int gathered = gathered_from(event, &quoted);
	int next_arg = 0;
	for (int i = 0; i < pieces->count; i++) {
		const struct format_piece *piece = &pieces->items[i];
		/* from the gathered value on, the format's text between the
		 * conversions gives way to format_gathered(); what follows the
		 * last one (the newline) is kept */
		if (!piece->is_conversion) {
			if (gathered < 0 || next_arg <= gathered || next_arg >= event->arg_count)
				strbuf_puts(sb, piece->text);
			continue;
		}
		if (next_arg >= event->arg_count)
			break;
		if (next_arg == gathered)
			format_gathered(sb, event, bytes, gathered, quoted);
		if (gathered >= 0 && next_arg >= gathered) {
			next_arg++;
			continue;
		}
		format_one_arg(sb, piece, &event->args[next_arg++], bytes);
	}
}

/* "NAME/100": an integer in hundredths, printed 12.34; the divisor (a
 * power of ten), and *length cut to NAME. 0 for any other name. */
static int64_t json_fixed_point(const char *name, size_t *length)
{
	const char *slash = memchr(name, '/', *length);
	if (!slash || slash == name)
		return 0;
	int64_t divisor = 1;
	for (const char *p = slash + 1; p < name + *length; p++) {
		if (*p != (p == slash + 1 ? '1' : '0') || divisor > 1000000000)
			return 0;
		divisor = p == slash + 1 ? 1 : divisor * 10;
	}
	if (divisor == 1)
		return 0;
	*length = (size_t)(slash - name);
	return divisor;
}

static void format_json_fixed_point(struct strbuf *sb, int64_t value, int64_t divisor)
{
	int digits = 0;
	for (int64_t d = divisor; d > 1; d /= 10)
		digits++;
	uint64_t magnitude = value < 0 ? -(uint64_t)value : (uint64_t)value;
	strbuf_printf(sb, "%s%llu.%0*llu", value < 0 ? "-" : "",
		      (unsigned long long)(magnitude / (uint64_t)divisor), digits,
		      (unsigned long long)(magnitude % (uint64_t)divisor));
}

/*
 * row() and the tool printers in JSON: each value under its name, numbers
 * as numbers, strings escaped, named integers (syscall_name() ...) as their
 * names. Names missing from field_names (never, from the compiler) are vN.
 * A name "-" is text only (tcptop's padding): no JSON field. A name
 * "NAME/100" is an integer in hundredths, under NAME as 12.34 (a ratio the
 * text prints as "%d.%02d", since the kernel side has no floating point).
 */
void format_json_fields(struct strbuf *sb, const struct event_desc *event, const void *record)
{
	const char *names = event->field_names ? event->field_names : "";
	const char *bytes = record;
	int fields = 0;

	for (int i = 0; i < event->arg_count; i++) {
		const struct event_arg *arg = &event->args[i];
		size_t length = strcspn(names, " ");
		/* a last name "args...": this value and the rest, as one array */
		bool gathers = length > 3 && strncmp(names + length - 3, "...", 3) == 0;
		if (length == 1 && names[0] == '-') {
			names += length;
			while (*names == ' ')
				names++;
			continue;
		}
		int64_t divisor = arg->type->kind == TYPE_INT ? json_fixed_point(names, &length) : 0;
		if (fields++)
			strbuf_puts(sb, ", ");
		if (gathers && names[0] == '"' && length > 5) {
			format_json_string(sb, names + 1, length - 5);  /* "args"... */
		} else if (length) {
			format_json_string(sb, names, gathers ? length - 3 : length);
		} else {
			char fallback[16];
			snprintf(fallback, sizeof(fallback), "v%d", i);
			format_json_string(sb, fallback, strlen(fallback));
		}
		if (gathers) {
			/* empty strings (unused slots) are left out */
			strbuf_puts(sb, ": [");
			for (int j = i, elements = 0; j < event->arg_count; j++) {
				const struct event_arg *rest = &event->args[j];
				if (rest->type->kind == TYPE_STRING && !*(bytes + rest->offset))
					continue;
				if (elements++)
					strbuf_puts(sb, ", ");
				format_value(sb, rest->type, bytes + rest->offset, true);
			}
			strbuf_putc(sb, ']');
			return;
		}
		names += strcspn(names, " ");
		while (*names == ' ')
			names++;
		strbuf_puts(sb, ": ");
		if (divisor) {
			int64_t value = 0;
			memcpy(&value, bytes + arg->offset, sizeof(value));
			format_json_fixed_point(sb, value, divisor);
		} else if (arg->conversion == ARG_STRFTIME) {
			struct strbuf text;
			strbuf_init(&text);
			format_strftime_arg(&text, arg, bytes + arg->offset);
			format_json_string(sb, text.data ? text.data : "", text.length);
			strbuf_free(&text);
		} else {
			format_value(sb, arg->type, bytes + arg->offset, true);
		}
	}
}

/* ---- status lines ---- */

void print_attached(const struct output *out, FILE *status, int probe_count)
{
	if (out->json) {
		/* bpftrace 0.17's record with the "count" that current bpftrace
		 * reads it by: consumers of either version find their field */
		fprintf(status, "{\"type\": \"attached_probes\", \"data\": {\"probes\": %d}, "
			"\"count\": %d}\n", probe_count, probe_count);
	} else {
		/* deliberately not bpftrace's "Attaching N probes...": this is printed
		 * once every probe is attached, so scripts can wait for it */
		fprintf(status, "Attached %d probe%s\n", probe_count, probe_count == 1 ? "" : "s");
	}
	fflush(status);
}

void print_lost(const struct output *out, FILE *status, uint64_t lost)
{
	if (out->json) {
		fprintf(status, "{\"type\": \"lost_events\", \"data\": {\"events\": %llu}, "
			"\"count\": %llu}\n", (unsigned long long)lost, (unsigned long long)lost);
	} else {
		fprintf(status, "Lost %llu events\n", (unsigned long long)lost);
	}
	fflush(status);
}
