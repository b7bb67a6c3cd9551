/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Types of values in a sonde program, shared by the compiler (which infers
 * them) and the runtime (which decodes the bytes BPF programs leave in maps
 * and ring-buffer records).
 *
 * Memory layout rules, which the code generator and the printers both rely on:
 *  - TYPE_INT has size 1, 2, 4 or 8 in expressions, but inside map keys, map
 *    values and ring-buffer records every integer is widened to 8 bytes
 *    (little endian, sign-extended when is_signed).
 *  - TYPE_STRING is `size` bytes holding a NUL-terminated string padded with
 *    NULs (sonde zeroes the buffer before reading, so no garbage follows).
 *  - TYPE_TUPLE fields sit at fields[i].offset; each offset is a multiple of 8
 *    and size is rounded up to 8.
 *  - Aggregations (count .. lhist) describe map values; each is a record in
 *    aggregations/, and program.h says how each is stored per CPU.
 */
#ifndef SONDE_TYPES_H
#define SONDE_TYPES_H

#include <stdbool.h>
#include <stdint.h>

enum type_kind {
	TYPE_NONE,     /* not inferred yet, or an error already reported */
	TYPE_VOID,     /* result of statement-like calls: printf, exit, clear */
	TYPE_INT,      /* integer: size 1/2/4/8, signed or unsigned */
	TYPE_STRING,   /* fixed-size NUL-padded character array */
	TYPE_TUPLE,    /* (a, b, ...): fields of their own types */
	TYPE_POINTER,  /* an address; `pointee` says what it points to */
	TYPE_RECORD,   /* named fields, e.g. a tracepoint's args */
	TYPE_INET,     /* ntop() result: 8-byte family then 16 address bytes */
	TYPE_AGGREGATION, /* count(), hist(), ...: `aggregation` says which (aggregations/) */
	TYPE_ARRAY,    /* array_length elements of `pointee` (char arrays are TYPE_STRING) */
	TYPE_STACK,    /* kstack/ustack: struct stack_value; is_user_pointer for ustack */
	TYPE_SYMBOL,   /* ksym(addr)/usym(addr): struct symbol_value; is_user_pointer for usym */
	TYPE_BUFFER,   /* buf(p, n): u64 length then `size - 8` bytes, printed with escapes */
};

/* Storage of a stack: the id of the trace in the program's stack map (a
 * negative errno when the kernel could not take it) and, for user stacks,
 * the process, so user addresses can be symbolized. */
struct stack_value {
	int64_t stack_id;
	uint64_t pid;
};

/* Storage of ksym()/usym(): an address, and the process for usym. */
struct symbol_value {
	uint64_t address;
	uint64_t pid;
};

enum stack_mode {
	STACK_MODE_BPFTRACE, /* one "\tfunc+off" line per frame, indented, as bpftrace */
	STACK_MODE_PERF,     /* "\taddress func+off (module)" lines, as perf script */
	STACK_MODE_RAW,      /* bare addresses */
};

#define TYPE_BTF_ID_SCRIPT (-1)
/* Slots of struct type's aggregation_params: as many as the aggregation
 * with the most constant parameters takes (lhist's min, max, step). */
#define TYPE_AGGREGATION_PARAMS 3

struct type;
struct int_names;
struct aggregation;

/* The names of an enum's values (a C enum from the script or from BTF). */
struct type_enumerator {
	char *name;
	int64_t value;
};

struct type_enum {
	char *name;          /* "enum colour"; "enum" for an anonymous one */
	int count;
	struct type_enumerator *items;
};

struct type_field {
	char *name;          /* NULL for tuple fields */
	struct type *type;
	int offset;          /* bytes from the start of the tuple/record */
	int bitfield_bits;   /* 0 unless a bitfield (records only) */
	int bitfield_offset;
};

struct type {
	enum type_kind kind;
	int size;            /* bytes this value occupies in BPF memory */
	bool is_signed;      /* TYPE_INT, and the value of sum/min/max/avg/stats */
	/* TYPE_AGGREGATION: which one, and everything about it */
	const struct aggregation *aggregation;
	const char *aggregation_name; /* its function's name ("hist"), for messages: common/
				       * does not read the record */
	/* TYPE_INT from syscall_name() etc.: printed as a name (common/names.h) */
	const struct int_names *int_names;
	/* TYPE_INT of an enum type: printed by the name of its value in text
	 * output (as current bpftrace; JSON keeps the number) */
	const struct type_enum *enumeration;
	/* TYPE_INT that is a bool (true/false, !x, (bool)x): prints as
	 * true/false, as current bpftrace */
	bool is_bool;
	/* TYPE_INT from strftime(): boot-time nanoseconds printed with this format */
	char *strftime_format;

	/* TYPE_TUPLE, TYPE_RECORD */
	int field_count;
	/* TYPE_TUPLE: the size bpftrace gives it (each field at its own size,
	 * naturally aligned), which sizeof() answers; sonde stores every
	 * integer field in 8 bytes (`size`). 0: not known, use `size`. */
	int declared_size;
	int declared_align;
	struct type_field *fields;
	char *record_name;   /* TYPE_RECORD: e.g. "struct _tracepoint_syscalls_sys_enter_openat" */

	/* TYPE_POINTER */
	struct type *pointee;
	bool is_user_pointer; /* read with probe_read_user rather than _kernel */

	/* TYPE_AGGREGATION: the call's constant parameters (hist's bits,
	 * lhist's range, ...), set and read by the aggregation's own file
	 * alone, which says what each slot means; zero where unused. Two
	 * values are of one type only if all of them agree. */
	int64_t aggregation_params[TYPE_AGGREGATION_PARAMS];

	/* TYPE_STRING from a char array field that is __data_loc (tracepoints) */
	bool is_data_loc;

	/* TYPE_ARRAY: element type is `pointee` */
	int array_length;

	/* TYPE_STACK: frames to show, and how */
	int stack_depth;
	enum stack_mode stack_mode;

	/* Kernel types from BTF (kernel/btf.c): the BTF id, and whether the
	 * fields of a TYPE_RECORD are still to be read (btf_complete_record).
	 * A struct a script defines has TYPE_BTF_ID_SCRIPT: not from BTF, but
	 * a C struct in memory all the same (unlike a probe's args record). */
	int btf_id;
	bool is_incomplete;
	bool is_union;
};

/* Constructors. Types are interned where cheap and never freed (a compile is
 * short-lived); callers must not mutate a type they did not create. */
struct type *type_new(enum type_kind kind);
struct type *type_void(void);
struct type *type_none(void);
struct type *type_int(int size, bool is_signed);
struct type *type_string(int size);
struct type *type_pointer(struct type *pointee, bool is_user);
/* Builds a tuple from element types, computing 8-aligned offsets. */
struct type *type_tuple(struct type **elements, int count);
/* A signed 64-bit integer printed through a name table (names.h). */
struct type *type_named_int(const struct int_names *names);
/* bool: one byte, 0 or 1, printed true/false. */
struct type *type_bool(void);
/* An enumeration without values yet; released by type_free_all. */
struct type_enum *type_enum_new(const char *name);
void type_enum_add(struct type_enum *enumeration, const char *name, int64_t value);
/* An integer of `size` bytes whose values are named by enumeration. */
struct type *type_enum_int(const struct type_enum *enumeration, int size);
/* The name of value in enumeration, or NULL when no enumerator has it. */
const char *type_enum_value_name(const struct type_enum *enumeration, int64_t value);
/* The type of an integer inside maps, tuples and records: 8 bytes, its
 * signedness, name table and enumeration kept. Other types are returned as
 * they are. */
struct type *type_widened(struct type *type);

/* Releases every type made so far; nothing may use them afterwards. */
void type_free_all(void);

bool type_is_aggregation(const struct type *type);
bool type_is_integer_like(const struct type *type); /* int or pointer */
bool type_equal(const struct type *a, const struct type *b);
/* Which field of a record (a tuple with named fields) holds the value that
 * field `index` of `like` names: records assigned with their fields in
 * another order are matched by name, as current bpftrace does; unnamed
 * tuples by position. -1 when `tuple` has no such field. */
int type_matching_field(const struct type *tuple, const struct type *like, int index);
/* How many bytes `p + 1` moves a pointer of this type (TYPE_POINTER): its
 * target's size, 1 for void and targets of unknown size. */
int type_pointer_step(const struct type *pointer);
/* Size inside maps/records: ints widen to 8, others keep their size. */
int type_storage_size(const struct type *type);
/* Human-readable, for error messages: "int64", "uint32", "string[64]", "(int64, string[16])". */
const char *type_name(const struct type *type);
const char *type_kind_name(enum type_kind kind);

#endif
