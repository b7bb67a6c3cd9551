/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of tracefs parsing, the probe registry and the tracepoint, interval,
 * profile, software and BEGIN/END providers, on the real kernel: format
 * files are this kernel's own, and the attach tests load small programs,
 * attach them, make the event happen and check a counter.
 *
 * Needs root and a mounted tracefs. Prints PASS/FAIL per case and a closing
 * `N passed, N failed` line; exits nonzero on any failure.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "kernel/attach.h"
#include "kernel/features.h"
#include "kernel/tracefs.h"
#include "probes/provider.h"

extern const struct provider tracepoint_provider;
extern const struct provider interval_provider;
extern const struct provider profile_provider;
extern const struct provider software_provider;
extern const struct provider begin_provider;
extern const struct provider end_provider;


/* ---- helpers ---- */

static const struct type_field *find_field(const struct type *record, const char *name)
{
	for (int i = 0; i < record->field_count; i++) {
		if (strcmp(record->fields[i].name, name) == 0)
			return &record->fields[i];
	}
	return NULL;
}

static bool is_int(const struct type *type, int size, bool is_signed)
{
	return type && type->kind == TYPE_INT && type->size == size && type->is_signed == is_signed;
}

static bool is_array(const struct type *type, int length, int element_size, bool is_signed)
{
	return type && type->kind == TYPE_ARRAY && type->array_length == length &&
	       type->size == length * element_size && is_int(type->pointee, element_size, is_signed);
}

static const struct src_loc no_loc = { 1, 1, 0 };

/* Expands text through its provider; returns the point count or -errno. */
static int expand(const char *text, probe_point_list *points, char **error)
{
	struct probe_spec *spec = probe_spec_parse(text, no_loc);
	const struct provider *provider = provider_lookup(spec->provider_name);

	*error = NULL;
	if (!provider) {
		*error = xasprintf("no provider %s", spec->provider_name);
		return -ENOENT;
	}
	int err = provider->expand(spec, points, error);
	return err < 0 ? err : points->count;
}

/* The error sentence expanding text gives, or "" if it expands. */
static char *expand_error(const char *text)
{
	probe_point_list points = { 0 };
	char *error = NULL;

	if (expand(text, &points, &error) >= 0) {
		free(error);
		return xstrdup("");
	}
	return error ? error : xstrdup("(no message)");
}

static bool error_is(const char *text, const char *expected)
{
	char *error = expand_error(text);
	bool same = strcmp(error, expected) == 0;
	if (!same)
		snprintf(why, sizeof(why), "%s: got \"%s\", want \"%s\"", text, error, expected);
	free(error);
	return same;
}

static bool error_contains(const char *text, const char *expected)
{
	char *error = expand_error(text);
	bool found = error[0] && strstr(error, expected);
	if (!found)
		snprintf(why, sizeof(why), "%s: got \"%s\", want it to contain \"%s\"", text, error,
			 expected);
	free(error);
	return found;
}

/* ---- tracefs ---- */

static bool test_tracefs_mounted(void)
{
	const char *root;
	char *error = NULL;

	EXPECT(tracefs_require(&root, &error) == 0,
	       "%s (mount -t tracefs nodev /sys/kernel/tracing)", error);
	EXPECT(strcmp(root, "/sys/kernel/tracing") == 0 ||
		       strcmp(root, "/sys/kernel/debug/tracing") == 0,
	       "unexpected root %s", root);
	return true;
}

static bool test_format_openat(void)
{
	struct tracepoint_format format;
	char *error = NULL;
	const struct type_field *field;

	EXPECT(tracefs_read_format("syscalls", "sys_enter_openat", &format, &error) == 0, "%s",
	       error);
	EXPECT(strcmp(format.record->record_name, "struct _tracepoint_syscalls_sys_enter_openat") == 0,
	       "record name %s", format.record->record_name);
	EXPECT(format.record->kind == TYPE_RECORD, "not a record");
	EXPECT(!find_field(format.record, "common_pid"), "common_pid should be hidden");
	EXPECT(format.record->field_count == 5, "%d fields, want 5", format.record->field_count);

	field = find_field(format.record, "filename");
	EXPECT(field, "no filename field");
	EXPECT(field->offset == 24, "filename at %d, want 24", field->offset);
	EXPECT(field->type->kind == TYPE_POINTER, "filename is %s", type_kind_name(field->type->kind));
	EXPECT(field->type->is_user_pointer, "filename should be a user pointer");
	EXPECT(field->type->pointee && field->type->pointee->kind == TYPE_INT &&
		       field->type->pointee->size == 1,
	       "filename should point to 1-byte ints");

	field = find_field(format.record, "__syscall_nr");
	EXPECT(field && field->offset == 8 && is_int(field->type, 4, true), "__syscall_nr");
	/* Declared int, stored in 8 bytes: the size column wins. */
	field = find_field(format.record, "flags");
	EXPECT(field && field->offset == 32 && is_int(field->type, 8, false), "flags");
	field = find_field(format.record, "mode");
	EXPECT(field && field->offset == 40 && is_int(field->type, 8, false), "mode");
	EXPECT(format.record->size == 48, "record size %d, want 48", format.record->size);

	/* The id must be the one in the separate id file. */
	char path[256];
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_openat/id", tracefs_root());
	char *id_text = read_file(path, NULL);
	EXPECT(id_text, "cannot read %s", path);
	EXPECT(format.id == atoi(id_text) && format.id > 0, "id %d vs %s", format.id, id_text);
	free(id_text);
	EXPECT(strcmp(format.decls[2], "const char * filename") == 0, "decl \"%s\"", format.decls[2]);
	tracepoint_format_free(&format);
	return true;
}

static bool test_format_sched_switch(void)
{
	struct tracepoint_format format;
	char *error = NULL;
	const struct type_field *field;

	EXPECT(tracefs_read_format("sched", "sched_switch", &format, &error) == 0, "%s", error);
	field = find_field(format.record, "prev_comm");
	EXPECT(field && field->offset == 8, "prev_comm offset");
	EXPECT(field->type->kind == TYPE_STRING && field->type->size == 16, "prev_comm is %s",
	       type_name(field->type));
	EXPECT(!field->type->is_data_loc, "prev_comm is not data_loc");
	field = find_field(format.record, "prev_pid");
	EXPECT(field && field->offset == 24 && is_int(field->type, 4, true), "prev_pid");
	field = find_field(format.record, "prev_state");
	EXPECT(field && is_int(field->type, 8, true), "prev_state");
	field = find_field(format.record, "next_comm");
	EXPECT(field && field->offset == 40 && field->type->kind == TYPE_STRING, "next_comm");
	field = find_field(format.record, "next_pid");
	EXPECT(field && field->offset == 56 && is_int(field->type, 4, true), "next_pid");
	tracepoint_format_free(&format);
	return true;
}

static bool test_format_data_loc(void)
{
	struct tracepoint_format format;
	char *error = NULL;
	const struct type_field *field;

	EXPECT(tracefs_read_format("sched", "sched_process_exec", &format, &error) == 0, "%s",
	       error);
	field = find_field(format.record, "filename");
	EXPECT(field && field->offset == 8, "filename offset");
	EXPECT(field->type->kind == TYPE_STRING && field->type->is_data_loc,
	       "filename should be a __data_loc string, is %s", type_name(field->type));
	EXPECT(strcmp(format.decls[0], "__data_loc char[] filename") == 0, "decl \"%s\"",
	       format.decls[0]);
	tracepoint_format_free(&format);
	return true;
}

/* A format file with a field of every kind of declaration. */
static const char synthetic_format[] =
	"name: demo\n"
	"ID: 42\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:u8 addr[6];\toffset:8;\tsize:6;\tsigned:0;\n"
	"\tfield:unsigned long args[];\toffset:16;\tsize:0;\tsigned:0;\n"
	"\tfield:const char *const * argv;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:struct file * file;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:__data_loc u64[] ips;\toffset:32;\tsize:4;\tsigned:0;\n"
	"\tfield:__rel_loc char[] msg;\toffset:36;\tsize:4;\tsigned:0;\n"
	"\tfield:bool ok;\toffset:40;\tsize:1;\tsigned:0;\n"
	"\tfield:__u8 saddr[4];\toffset:44;\tsize:4;\tsigned:0;\n"
	"\tfield:__u8 daddr_v6[16];\toffset:48;\tsize:16;\tsigned:0;\n"
	"\tfield:__u16 ports[3];\toffset:64;\tsize:6;\tsigned:0;\n"
	"\tfield:long sysctl_mem[3];\toffset:72;\tsize:24;\tsigned:1;\n"
	"\tfield:char comm[16];\toffset:96;\tsize:16;\tsigned:1;\n"
	"\tfield:const char * names[2];\toffset:112;\tsize:16;\tsigned:0;\n"
	"\tfield:struct pair pairs[2];\toffset:128;\tsize:24;\tsigned:0;\n"
	"\n"
	"print fmt: \"%d\", REC->ok\n";

static bool test_format_synthetic(void)
{
	struct tracepoint_format format;
	char *error = NULL;
	const struct type_field *field;

	EXPECT(tracefs_parse_format(synthetic_format, "demo", "ev", &format, &error) == 0, "%s", error);
	EXPECT(format.id == 42, "id %d", format.id);
	EXPECT(format.record->field_count == 13, "%d fields", format.record->field_count);
	field = find_field(format.record, "argv");
	EXPECT(field && field->type->kind == TYPE_POINTER && field->type->pointee->kind == TYPE_POINTER &&
		       !field->type->is_user_pointer,
	       "argv: kernel pointer to pointer");
	field = find_field(format.record, "file");
	EXPECT(field && field->type->kind == TYPE_POINTER && !field->type->is_user_pointer,
	       "file: kernel pointer");
	field = find_field(format.record, "ips");
	EXPECT(field && is_int(field->type, 4, false), "ips: raw data_loc word");
	field = find_field(format.record, "msg");
	EXPECT(field && is_int(field->type, 4, false), "msg: raw rel_loc word");
	field = find_field(format.record, "ok");
	EXPECT(field && field->offset == 40 && is_int(field->type, 1, false), "ok");
	EXPECT(strcmp(format.decls[2], "const char *const * argv") == 0, "decl %s", format.decls[2]);
	tracepoint_format_free(&format);

	EXPECT(tracefs_parse_format("format:\n", "demo", "ev", &format, &error) < 0,
	       "a format without ID should fail");
	EXPECT(strcmp(error, "format of tracepoint demo:ev has no ID line") == 0, "%s", error);
	free(error);
	return true;
}

/* Array declarations become arrays of their element type (the element size
 * is the field's size over the count); char arrays stay strings. */
static bool test_format_arrays(void)
{
	struct tracepoint_format format;
	char *error = NULL;
	const struct type_field *field;

	EXPECT(tracefs_parse_format(synthetic_format, "demo", "ev", &format, &error) == 0, "%s", error);
	field = find_field(format.record, "addr");
	EXPECT(field && is_array(field->type, 6, 1, false), "addr: u8[6]");
	field = find_field(format.record, "args");
	EXPECT(field && is_array(field->type, 0, 8, false), "args: flexible unsigned long[]");
	field = find_field(format.record, "saddr");
	EXPECT(field && field->offset == 44 && is_array(field->type, 4, 1, false), "saddr is %s",
	       field ? type_name(field->type) : "missing");
	field = find_field(format.record, "daddr_v6");
	EXPECT(field && field->offset == 48 && is_array(field->type, 16, 1, false), "daddr_v6");
	field = find_field(format.record, "ports");
	EXPECT(field && is_array(field->type, 3, 2, false), "ports is %s",
	       field ? type_name(field->type) : "missing");
	field = find_field(format.record, "sysctl_mem");
	EXPECT(field && is_array(field->type, 3, 8, true), "sysctl_mem is %s",
	       field ? type_name(field->type) : "missing");
	field = find_field(format.record, "comm");
	EXPECT(field && field->type->kind == TYPE_STRING && field->type->size == 16, "comm");
	field = find_field(format.record, "names");
	EXPECT(field && field->type->kind == TYPE_ARRAY && field->type->array_length == 2 &&
		       field->type->size == 16 && field->type->pointee->kind == TYPE_POINTER,
	       "names: array of 2 pointers");
	/* 12-byte elements are no integer: the field is left out */
	EXPECT(!find_field(format.record, "pairs"), "pairs should be left out");
	EXPECT(strcmp(type_name(find_field(format.record, "saddr")->type), "uint8[4]") == 0,
	       "saddr named %s", type_name(find_field(format.record, "saddr")->type));
	tracepoint_format_free(&format);

	/* the kernel's own: sock:inet_sock_set_state, where the bug was seen */
	if (tracefs_read_format("sock", "inet_sock_set_state", &format, &error) == 0) {
		field = find_field(format.record, "saddr");
		EXPECT(field && is_array(field->type, 4, 1, false), "inet_sock_set_state saddr");
		field = find_field(format.record, "daddr_v6");
		EXPECT(field && is_array(field->type, 16, 1, false), "inet_sock_set_state daddr_v6");
		tracepoint_format_free(&format);
	} else {
		free(error);
	}
	return true;
}

/* ---- registry ---- */

static bool test_spec_parse(void)
{
	struct probe_spec *spec;

	spec = probe_spec_parse("BEGIN", no_loc);
	EXPECT(strcmp(spec->provider_name, "BEGIN") == 0 && spec->part_count == 0, "BEGIN");
	spec = probe_spec_parse("t:syscalls:sys_enter_*", no_loc);
	EXPECT(strcmp(spec->provider_name, "t") == 0 && spec->part_count == 2 &&
		       strcmp(spec->parts[0], "syscalls") == 0 &&
		       strcmp(spec->parts[1], "sys_enter_*") == 0,
	       "t:syscalls:sys_enter_*");
	EXPECT(strcmp(spec->text, "t:syscalls:sys_enter_*") == 0, "text kept");
	spec = probe_spec_parse("uprobe:/bin/bash:readline", no_loc);
	EXPECT(spec->part_count == 2 && strcmp(spec->parts[0], "/bin/bash") == 0, "uprobe path");
	spec = probe_spec_parse("uprobe:\"/opt/a b:c/app\":main", no_loc);
	EXPECT(spec->part_count == 2 && strcmp(spec->parts[0], "/opt/a b:c/app") == 0 &&
		       strcmp(spec->parts[1], "main") == 0,
	       "quoted part: no quotes, its colon kept: %s", spec->parts[0]);
	spec = probe_spec_parse("software:cs:", no_loc);
	EXPECT(spec->part_count == 2 && spec->parts[1][0] == '\0', "empty trailing part");
	spec = probe_spec_parse("usdt:a:b:c:d:e", no_loc);
	EXPECT(spec->part_count == 4 && strcmp(spec->parts[3], "d:e") == 0,
	       "the last part takes the rest: %d parts", spec->part_count);
	return true;
}

static bool test_provider_lookup(void)
{
	EXPECT(provider_lookup("t") == &tracepoint_provider, "t");
	EXPECT(provider_lookup("tracepoint") == &tracepoint_provider, "tracepoint");
	EXPECT(provider_lookup("i") == &interval_provider, "i");
	EXPECT(provider_lookup("p") == &profile_provider, "p");
	EXPECT(provider_lookup("s") == &software_provider, "s");
	EXPECT(provider_lookup("software") == &software_provider, "software");
	EXPECT(provider_lookup("begin") == &begin_provider, "begin");
	EXPECT(provider_lookup("BEGIN") == &begin_provider, "BEGIN");
	EXPECT(provider_lookup("END") == &end_provider, "END");
	EXPECT(provider_lookup("nope") == NULL, "nope");
	int count = 0;
	for (const struct provider *const *p = provider_table; *p; p++)
		count++;
	EXPECT(count >= 6, "table has %d providers", count);
	return true;
}

static bool test_parse_count(void)
{
	uint64_t value;

	EXPECT(probe_parse_count("99", &value) && value == 99, "99");
	EXPECT(probe_parse_count("1_000", &value) && value == 1000, "1_000");
	EXPECT(probe_parse_count("1e6", &value) && value == 1000000, "1e6");
	EXPECT(!probe_parse_count("", &value), "empty");
	EXPECT(!probe_parse_count("1k", &value), "1k");
	EXPECT(!probe_parse_count("-1", &value), "-1");
	EXPECT(!probe_parse_count("_1", &value), "_1");
	EXPECT(!probe_parse_count("99999999999999999999", &value), "overflow");
	return true;
}

/* ---- tracepoint provider ---- */

/* Counts available_events lines starting with prefix, independently of
 * tracefs_find. */
static int count_events(const char *prefix)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/available_events", tracefs_root());
	char *text = read_file(path, NULL);
	int count = 0;

	if (!text)
		return -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		count += strncmp(line, prefix, strlen(prefix)) == 0;
	free(text);
	return count;
}

static bool test_tracepoint_expand(void)
{
	probe_point_list points = { 0 };
	char *error;
	int n;

	n = expand("tracepoint:sched:sched_switch", &points, &error);
	EXPECT(n == 1, "sched_switch gave %d (%s)", n, error);
	EXPECT(strcmp(points.items[0]->name, "tracepoint:sched:sched_switch") == 0, "name %s",
	       points.items[0]->name);
	EXPECT(strcmp(points.items[0]->target, "sched") == 0 &&
		       strcmp(points.items[0]->function, "sched_switch") == 0,
	       "target/function");
	EXPECT(points.items[0]->provider == &tracepoint_provider, "provider");

	points.count = 0;
	n = expand("t:syscalls:sys_enter_open*", &points, &error);
	int want = count_events("syscalls:sys_enter_open");
	EXPECT(n == want && n >= 2, "sys_enter_open* gave %d, want %d", n, want);
	for (int i = 1; i < n; i++)
		EXPECT(strcmp(points.items[i - 1]->name, points.items[i]->name) < 0, "not sorted");

	points.count = 0;
	n = expand("tracepoint:*:sched_switch", &points, &error);
	EXPECT(n == 1, "*:sched_switch gave %d", n);

	points.count = 0;
	n = expand("tracepoint:syscalls:sys_enter_*", &points, &error);
	want = count_events("syscalls:sys_enter_");
	EXPECT(n == want && n > 100, "sys_enter_* gave %d, want %d", n, want);

	struct probe_point *point = points.items[0];
	EXPECT(point->provider->describe(point, &error) == 0, "describe: %s", error);
	EXPECT(point->args_type && point->args_type->kind == TYPE_RECORD, "args type");
	/* a wide syscall probe is served through raw_syscalls (syscall_tracepoint.c):
	 * its args are located in the saved registers */
	EXPECT(point->args_access == ARGS_LOCATED_RECORD && (point->features & PROBE_HAS_ARGS),
	       "access/features of a wide syscall probe");

	points.count = 0;
	n = expand("tracepoint:syscalls:sys_enter_openat", &points, &error);
	EXPECT(n == 1, "sys_enter_openat gave %d", n);
	point = points.items[0];
	EXPECT(point->provider->describe(point, &error) == 0, "describe: %s", error);
	EXPECT(point->args_access == ARGS_CTX_RECORD && (point->features & PROBE_HAS_ARGS),
	       "access/features of one syscall probe");
	return true;
}

/* -l order is bpftrace's: by the whole "category:name" string, so
 * fib6:fib6_table_lookup comes before fib:fib_table_lookup. */
static bool test_tracefs_order(void)
{
	tracepoint_list all = { 0 };
	char *error = NULL;

	EXPECT(tracefs_find("*", "*", &all, &error) == 0, "%s", error);
	EXPECT(all.count == count_events(""), "%d tracepoints, available_events has %d", all.count,
	       count_events(""));
	for (int i = 1; i < all.count; i++) {
		char *previous = xasprintf("%s:%s", all.items[i - 1].category, all.items[i - 1].name);
		char *current = xasprintf("%s:%s", all.items[i].category, all.items[i].name);
		bool ordered = strcmp(previous, current) < 0;
		if (!ordered)
			snprintf(why, sizeof(why), "%s listed before %s", previous, current);
		free(previous);
		free(current);
		if (!ordered)
			return false;
	}
	tracepoint_list_free(&all);
	return true;
}

/* An exact category and name is found by its enable file, not by reading
 * available_events: the answer must be the listing's for every event, for
 * ftrace's entries that have a format file but are not listed, and for
 * names that are not one path component. */
static bool test_tracefs_exact_names(void)
{
	tracepoint_list all = { 0 };
	char *error = NULL;

	EXPECT(tracefs_find("*", "*", &all, &error) == 0, "%s", error);
	EXPECT(all.count > 100, "only %d tracepoints listed", all.count);
	for (int i = 0; i < all.count; i++) {
		tracepoint_list one = { 0 };
		int err = tracefs_find(all.items[i].category, all.items[i].name, &one, &error);
		bool same = err == 0 && one.count == 1 &&
			    strcmp(one.items[0].category, all.items[i].category) == 0 &&
			    strcmp(one.items[0].name, all.items[i].name) == 0;
		if (!same)
			snprintf(why, sizeof(why), "%s:%s found %d times by its exact name",
				 all.items[i].category, all.items[i].name, one.count);
		tracepoint_list_free(&one);
		if (!same)
			return false;
	}
	tracepoint_list_free(&all);
	static const char *const absent[][2] = {
		{ "ftrace", "function" }, /* has events/ftrace/function/format, not listed */
		{ "syscalls", "sys_enter_sonde_nope" },
		{ "raw_syscalls", "." },
		{ "raw_syscalls", ".." },
		{ "..", "raw_syscalls" },
		{ "raw_syscalls/sys_enter", "format" },
		{ "", "sys_enter" },
	};
	for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
		tracepoint_list none = { 0 };
		EXPECT(tracefs_find(absent[i][0], absent[i][1], &none, &error) == 0, "%s", error);
		EXPECT(none.count == 0, "'%s:%s' found", absent[i][0], absent[i][1]);
	}
	return true;
}

static bool test_tracepoint_errors(void)
{
	if (!error_is("tracepoint:syscalls:sys_enter_nope",
		      "tracepoint not found: syscalls:sys_enter_nope"))
		return false;
	if (!error_is("tracepoint:sysc*:nope*", "tracepoints not found: sysc*:nope*"))
		return false;
	if (!error_contains("tracepoint:sched", "tracepoint:CATEGORY:NAME"))
		return false;
	if (!error_contains("t:a:b:c", "tracepoint:CATEGORY:NAME"))
		return false;
	return true;
}

static bool test_tracepoint_list(void)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	EXPECT(tracepoint_provider.list("t:sched:sched_switch", true, out, NULL) == 0, "list failed");
	fclose(out);
	const char *want = "tracepoint:sched:sched_switch\n"
			   "    char prev_comm[16]\n"
			   "    pid_t prev_pid\n";
	EXPECT(strncmp(text, want, strlen(want)) == 0, "got:\n%s", text);
	free(text);

	out = open_memstream(&text, &length);
	tracepoint_provider.list("tracepoint:syscalls:sys_enter_openat*", false, out, NULL);
	fclose(out);
	EXPECT(strstr(text, "tracepoint:syscalls:sys_enter_openat\n") &&
		       !strstr(text, "    "),
	       "got:\n%s", text);
	free(text);
	return true;
}

/* ---- timers, software, BEGIN/END ---- */

static bool expect_timer(const char *text, const char *unit, uint64_t period, uint64_t frequency,
			 bool every_cpu)
{
	probe_point_list points = { 0 };
	char *error;
	int n = expand(text, &points, &error);

	EXPECT(n == 1, "%s: %s", text, error);
	struct probe_point *point = points.items[0];
	EXPECT(strcmp(point->target, unit) == 0, "%s: unit %s", text, point->target);
	EXPECT(point->period == period, "%s: period %llu, want %llu", text,
	       (unsigned long long)point->period, (unsigned long long)period);
	EXPECT(point->frequency == frequency, "%s: frequency %llu", text,
	       (unsigned long long)point->frequency);
	EXPECT(point->every_cpu == every_cpu, "%s: every_cpu", text);
	return true;
}

static bool test_interval_specs(void)
{
	if (!expect_timer("interval:s:1", "s", 1000000000ull, 0, false) ||
	    !expect_timer("i:ms:10", "ms", 10000000ull, 0, false) ||
	    !expect_timer("interval:us:5", "us", 5000, 0, false) ||
	    !expect_timer("interval:hz:99", "hz", 0, 99, false) ||
	    !expect_timer("interval:s:1e3", "s", 1000000000000ull, 0, false) ||
	    !expect_timer("profile:hz:99", "hz", 0, 99, true) ||
	    !expect_timer("p:ms:1_0", "ms", 10000000ull, 0, true))
		return false;

	probe_point_list points = { 0 };
	char *error;
	expand("i:s:1", &points, &error);
	EXPECT(strcmp(points.items[0]->name, "interval:s:1") == 0, "name %s", points.items[0]->name);

	return error_contains("interval:5", "interval:UNIT:COUNT") &&
	       error_is("interval:foo:5", "'foo' is not a unit interval probes accept; use s, ms, us or hz") &&
	       error_is("profile:x:99", "'x' is not a unit profile probes accept; use s, ms, us or hz") &&
	       error_is("interval:s:", "interval:s needs a count: interval:s:N") &&
	       error_is("interval:s:abc", "'abc' in interval:s:abc is not a whole number") &&
	       error_is("interval:s:0", "the count in interval:s:0 must be greater than zero") &&
	       error_contains("interval:s:1:2", "interval:UNIT:COUNT") &&
	       error_contains("interval:s:99999999999", "too long");
}

static bool test_software_specs(void)
{
	probe_point_list points = { 0 };
	char *error;

	EXPECT(expand("software:cs", &points, &error) == 1, "software:cs: %s", error);
	EXPECT(strcmp(points.items[0]->target, "context-switches") == 0, "target");
	EXPECT(points.items[0]->period == 1000 && points.items[0]->every_cpu, "default period");
	EXPECT(strcmp(points.items[0]->name, "software:cs") == 0, "name %s", points.items[0]->name);

	points.count = 0;
	EXPECT(expand("s:faults:10", &points, &error) == 1, "s:faults:10: %s", error);
	EXPECT(strcmp(points.items[0]->target, "page-faults") == 0 && points.items[0]->period == 10,
	       "s:faults:10");
	EXPECT(strcmp(points.items[0]->name, "software:faults:10") == 0, "name");

	points.count = 0;
	EXPECT(expand("software:cpu-clock:", &points, &error) == 1, "trailing colon: %s", error);
	EXPECT(points.items[0]->period == 1000000, "cpu-clock default");

	points.count = 0;
	EXPECT(expand("software:*", &points, &error) == 11, "software:* gave %d", points.count);

	return error_is("software:nope",
			"'nope' is not a software event; valid events are alignment-faults, "
			"bpf-output, context-switches (cs), cpu-clock (cpu), cpu-migrations, "
			"dummy, emulation-faults, major-faults, minor-faults, page-faults "
			"(faults) and task-clock") &&
	       error_is("software:cs:abc", "'abc' in software:cs:abc is not a whole number") &&
	       error_is("software:cs:0", "the count in software:cs:0 must be greater than zero") &&
	       error_contains("software:faults:1:2", "software:EVENT:COUNT") &&
	       error_contains("software:zz*", "no software event matches 'zz*'");
}

static bool test_software_list(void)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);

	software_provider.list("software:*", false, out, NULL);
	fclose(out);
	EXPECT(strstr(text, "software:cpu-clock:\n") && strstr(text, "software:task-clock:\n"),
	       "got:\n%s", text);
	free(text);
	out = open_memstream(&text, &length);
	software_provider.list("s:page-faults", false, out, NULL);
	fclose(out);
	EXPECT(strcmp(text, "software:page-faults:\n") == 0, "got:\n%s", text);
	free(text);
	return true;
}

static bool test_begin_end(void)
{
	probe_point_list points = { 0 };
	char *error;
	fd_list fds = { 0 };

	EXPECT(expand("BEGIN", &points, &error) == 1, "BEGIN: %s", error);
	EXPECT(strcmp(points.items[0]->name, "BEGIN") == 0, "name");
	EXPECT(points.items[0]->provider->prog_type == BPF_PROG_TYPE_RAW_TRACEPOINT, "prog type");
	EXPECT(begin_provider.attach(points.items[0], -1, &fds, &error) < 0 && error,
	       "BEGIN must not attach");
	points.count = 0;
	EXPECT(expand("end", &points, &error) == 1 && strcmp(points.items[0]->name, "END") == 0,
	       "end");
	return error_is("BEGIN:x", "BEGIN probes take no arguments: write just BEGIN");
}

/* ---- attaching for real ---- */

/* A program that adds 1 to slot 0 of an array map:
 *   *(u32 *)(fp - 4) = 0; r0 = lookup(map, fp - 4); if r0: *(u64 *)r0 += 1 */
static int load_counter(enum bpf_prog_type type, int map_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -4, .imm = 0 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_0, .src_reg = BPF_REG_1,
		  .imm = BPF_ADD },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(type, "sonde_test", "GPL", insns, sizeof(insns) / sizeof(insns[0]),
			       NULL);
	return fd < 0 ? -errno : fd;
}

static uint64_t read_counter(int map_fd)
{
	uint32_t key = 0;
	uint64_t value = 0;
	bpf_map_lookup_elem(map_fd, &key, &value);
	return value;
}

static void reset_counter(int map_fd)
{
	uint32_t key = 0;
	uint64_t value = 0;
	bpf_map_update_elem(map_fd, &key, &value, BPF_ANY);
}

static void pin_to_cpu(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* How many bpf_links in the system run the program prog_fd. */
static int links_of_program(int prog_fd)
{
	struct bpf_prog_info prog_info = { 0 };
	uint32_t info_length = sizeof(prog_info);
	uint32_t id = 0;
	int count = 0;

	if (bpf_obj_get_info_by_fd(prog_fd, &prog_info, &info_length) < 0)
		return -1;
	while (bpf_link_get_next_id(id, &id) == 0) {
		int fd = bpf_link_get_fd_by_id(id);
		struct bpf_link_info link_info = { 0 };
		uint32_t link_length = sizeof(link_info);
		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &link_info, &link_length) == 0 &&
		    link_info.prog_id == prog_info.id)
			count++;
		close(fd);
	}
	return count;
}

static void close_all(fd_list *fds)
{
	for (int i = 0; i < fds->count; i++)
		close(fds->items[i]);
	fds->count = 0;
}

static bool test_tracepoint_attach(void)
{
	probe_point_list points = { 0 };
	fd_list fds = { 0 };
	char *error;
	int map_fd, prog_fd, cpu_count, *cpus;

	EXPECT(expand("tracepoint:syscalls:sys_enter_getppid", &points, &error) == 1, "%s", error);
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "counter", 4, 8, 1, NULL);
	EXPECT(map_fd >= 0, "map: %s", strerror(errno));
	prog_fd = load_counter(BPF_PROG_TYPE_TRACEPOINT, map_fd);
	EXPECT(prog_fd >= 0, "load: %s", strerror(-prog_fd));

	EXPECT(tracepoint_provider.attach(points.items[0], prog_fd, &fds, &error) == 0, "%s", error);
	EXPECT(fds.count >= 1, "no fds pushed");
	EXPECT(links_of_program(prog_fd) == 1, "%d links while attached", links_of_program(prog_fd));

	/* One perf event opened on CPU 0 must see the tracepoint on every CPU. */
	cpu_count = online_cpus(&cpus);
	EXPECT(cpu_count > 0, "online cpus");
	for (int i = 0; i < cpu_count; i++) {
		pin_to_cpu(cpus[i]);
		reset_counter(map_fd);
		for (int j = 0; j < 5; j++)
			syscall(SYS_getppid);
		uint64_t hits = read_counter(map_fd);
		EXPECT(hits >= 5, "cpu %d: %llu hits, want >= 5", cpus[i], (unsigned long long)hits);
	}
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int i = 0; i < cpu_count; i++)
		CPU_SET(cpus[i], &all);
	sched_setaffinity(0, sizeof(all), &all);
	free(cpus);

	close_all(&fds);
	reset_counter(map_fd);
	syscall(SYS_getppid);
	EXPECT(read_counter(map_fd) == 0, "still firing after close");
	EXPECT(links_of_program(prog_fd) == 0, "links left after close");
	close(prog_fd);
	close(map_fd);
	return true;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Whether hits fit a timer of period_ms that ran for elapsed_ms on cpus
 * CPUs, allowing for a loaded machine. */
static bool plausible_hits(uint64_t hits, double elapsed_ms, double period_ms, int cpus)
{
	double expected = elapsed_ms / period_ms * cpus;
	/* low bound generous: a frequency-mode (hz) event starts with a long
	 * period that the kernel shortens over the first samples */
	return (double)hits >= expected * 0.3 - 1 && (double)hits <= expected * 1.5 + 2 * cpus;
}

static bool test_timer_attach(void)
{
	probe_point_list points = { 0 };
	fd_list fds = { 0 };
	char *error;
	int map_fd, prog_fd, cpu_count, *cpus;
	uint64_t hits;
	double start, elapsed;

	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "counter", 4, 8, 1, NULL);
	prog_fd = load_counter(BPF_PROG_TYPE_PERF_EVENT, map_fd);
	EXPECT(prog_fd >= 0, "load: %s", strerror(-prog_fd));

	EXPECT(expand("interval:ms:10", &points, &error) == 1, "%s", error);
	EXPECT(interval_provider.attach(points.items[0], prog_fd, &fds, &error) == 0, "%s", error);
	EXPECT(fds.count == 2, "interval: %d fds, want perf event + link", fds.count);
	start = now_ms();
	sleep_ms(200);
	close_all(&fds);
	elapsed = now_ms() - start;
	hits = read_counter(map_fd);
	EXPECT(plausible_hits(hits, elapsed, 10, 1), "interval:ms:10 for %.0f ms fired %llu times",
	       elapsed, (unsigned long long)hits);

	cpu_count = online_cpus(&cpus);
	free(cpus);
	points.count = 0;
	reset_counter(map_fd);
	EXPECT(expand("profile:hz:100", &points, &error) == 1, "%s", error);
	EXPECT(profile_provider.attach(points.items[0], prog_fd, &fds, &error) == 0, "%s", error);
	EXPECT(fds.count == 2 * cpu_count, "profile: %d fds for %d cpus", fds.count, cpu_count);
	start = now_ms();
	sleep_ms(200);
	close_all(&fds);
	elapsed = now_ms() - start;
	hits = read_counter(map_fd);
	EXPECT(plausible_hits(hits, elapsed, 10, cpu_count),
	       "profile:hz:100 for %.0f ms fired %llu times on %d cpus", elapsed,
	       (unsigned long long)hits, cpu_count);

	points.count = 0;
	reset_counter(map_fd);
	EXPECT(expand("software:cs:1", &points, &error) == 1, "%s", error);
	EXPECT(software_provider.attach(points.items[0], prog_fd, &fds, &error) == 0, "%s", error);
	for (int i = 0; i < 20; i++)
		sleep_ms(1);
	close_all(&fds);
	hits = read_counter(map_fd);
	EXPECT(hits >= 20, "software:cs:1 fired %llu times for 20 sleeps", (unsigned long long)hits);

	EXPECT(links_of_program(prog_fd) == 0, "links left after close");
	close(prog_fd);
	close(map_fd);
	return true;
}

static bool test_attach_error(void)
{
	struct probe_point *point = probe_point_new(&tracepoint_provider,
						    "tracepoint:sched:sched_switch");
	fd_list fds = { 0 };
	char *error = NULL;

	point->target = xstrdup("sched");
	point->function = xstrdup("sched_switch");
	/* -1 is not a program: the message must name the probe and the step. */
	EXPECT(tracepoint_provider.attach(point, -1, &fds, &error) < 0, "attached fd -1");
	EXPECT(error && strstr(error, "cannot attach tracepoint:sched:sched_switch: "), "error: %s",
	       error ? error : "(none)");
	EXPECT(fds.count == 0, "fds left after a failed attach");
	return true;
}

/* ---- features ---- */

static bool test_features(void)
{
	char *error = NULL;

	EXPECT(features_check_bpf(&error) == 0, "%s", error);
	EXPECT(feature_available(FEATURE_TRACEFS), "tracefs: %s", feature_reason(FEATURE_TRACEFS));
	EXPECT(feature_available(FEATURE_TRACEPOINT), "tracepoint: %s",
	       feature_reason(FEATURE_TRACEPOINT));
	EXPECT(feature_available(FEATURE_CPU_CLOCK), "cpu-clock: %s",
	       feature_reason(FEATURE_CPU_CLOCK));
	EXPECT(feature_has_ringbuf(), "ringbuf: %s", feature_reason(FEATURE_RINGBUF));
	EXPECT(feature_has_helper(BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_user_str),
	       "probe_read_user_str");
	EXPECT(!feature_has_helper(BPF_PROG_TYPE_TRACEPOINT, (enum bpf_func_id)100000),
	       "helper 100000 exists?");
	for (int f = 0; f < FEATURE_COUNT; f++) {
		bool available = feature_available((enum feature)f);
		const char *reason = feature_reason((enum feature)f);
		EXPECT(available == (reason[0] == '\0'), "%s: available %d but reason \"%s\"",
		       feature_name((enum feature)f), available, reason);
	}

	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	features_print_info(out);
	fclose(out);
	EXPECT(strstr(text, "  tracepoint: available\n") && strstr(text, "Probe types\n"),
	       "info:\n%s", text);
	free(text);
	return true;
}

int main(void)
{
	if (getenv("SONDE_TEST_SHOW_INFO"))
		features_print_info(stdout);
	run("tracefs_mounted", test_tracefs_mounted);
	if (!tracefs_root()) {
		printf("%d passed, %d failed\n", passed, failed);
		return 1;
	}
	run("format_openat", test_format_openat);
	run("format_sched_switch", test_format_sched_switch);
	run("format_data_loc", test_format_data_loc);
	run("format_synthetic", test_format_synthetic);
	run("format_arrays", test_format_arrays);
	run("spec_parse", test_spec_parse);
	run("provider_lookup", test_provider_lookup);
	run("parse_count", test_parse_count);
	run("tracepoint_expand", test_tracepoint_expand);
	run("tracefs_order", test_tracefs_order);
	run("tracefs_exact_names", test_tracefs_exact_names);
	run("tracepoint_errors", test_tracepoint_errors);
	run("tracepoint_list", test_tracepoint_list);
	run("interval_specs", test_interval_specs);
	run("software_specs", test_software_specs);
	run("software_list", test_software_list);
	run("begin_end", test_begin_end);
	run("tracepoint_attach", test_tracepoint_attach);
	run("timer_attach", test_timer_attach);
	run("attach_error", test_attach_error);
	run("features", test_features);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
