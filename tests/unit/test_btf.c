/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of kernel/btf.c (kernel types as sonde types) and of the providers
 * built on it: rawtracepoint (expanded, described and attached for real),
 * kprobe/kretprobe, fentry/fexit and hardware (expansion, description, and
 * on kernels without them, the error sentence).
 *
 * Every offset is checked against the kernel's own BTF read with libbpf, so
 * the tests hold on any kernel with BTF. Needs root for the attach test.
 *
 * The in-place reader under it (kernel/btf_file.c) is checked against
 * libbpf's parse of the same BTF: every type record, name and size, a
 * spread of name searches and enumerators, a split BTF built with libbpf
 * on top of vmlinux (a module's shape), and broken blobs, refused.
 * Prints PASS/FAIL per case and a closing `N passed, N failed` line.
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kernel/btf.h"
#include "kernel/btf_file.h"
#include "kernel/kallsyms.h"
#include "kernel/tracefs.h"
#include "kernel/features.h"
#include "probes/provider.h"

extern const struct provider rawtracepoint_provider;
extern const struct provider kprobe_provider;
extern const struct provider kretprobe_provider;
extern const struct provider fentry_provider;
extern const struct provider fexit_provider;
extern const struct provider hardware_provider;

static struct btf *reference_btf;
static struct btf_file *vmlinux_file; /* sonde's reader, beside libbpf's */

/* ---- helpers ---- */

static const struct type_field *find_field(const struct type *record, const char *name)
{
	for (int i = 0; record && i < record->field_count; i++) {
		if (record->fields[i].name && strcmp(record->fields[i].name, name) == 0)
			return &record->fields[i];
	}
	return NULL;
}

/* Bit offset of a direct member of a struct, from libbpf; -1 if absent. */
static long reference_bit_offset(const char *struct_name, const char *member, int *bitfield_size)
{
	int id = btf__find_by_name_kind(reference_btf, struct_name, BTF_KIND_STRUCT);
	const struct btf_type *t;

	if (id < 0)
		return -1;
	t = btf__type_by_id(reference_btf, (uint32_t)id);
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *name = btf__name_by_offset(reference_btf, btf_members(t)[i].name_off);
		if (name && strcmp(name, member) == 0) {
			if (bitfield_size)
				*bitfield_size = (int)btf_member_bitfield_size(t, (uint32_t)i);
			return (long)btf_member_bit_offset(t, (uint32_t)i);
		}
	}
	return -1;
}

static struct probe_spec *spec(const char *text)
{
	struct src_loc loc = { 0 };
	return probe_spec_parse(text, loc);
}

static void free_points(probe_point_list *points)
{
	for (int i = 0; i < points->count; i++)
		probe_point_free(points->items[i]);
	free(points->items);
	points->items = NULL;
	points->count = points->capacity = 0;
}

/* ---- types ---- */

static bool test_available(void)
{
	EXPECT(btf_available(), "btf_available() is false on a kernel with BTF");
	return true;
}

static bool test_task_struct(void)
{
	struct type *task = btf_type_by_name("struct task_struct");
	const struct type_field *pid, *comm, *parent;

	EXPECT(task && task->kind == TYPE_RECORD, "struct task_struct not found");
	EXPECT(strcmp(task->record_name, "struct task_struct") == 0, "name %s", task->record_name);
	EXPECT(!task->is_incomplete && task->field_count > 50, "not completed (%d fields)",
	       task->field_count);
	EXPECT(task->btf_id > 0 && !task->is_union, "btf_id %d", task->btf_id);
	pid = find_field(task, "pid");
	EXPECT(pid, "no pid field");
	EXPECT(pid->type->kind == TYPE_INT && pid->type->size == 4 && pid->type->is_signed,
	       "pid is %s", type_name(pid->type));
	EXPECT(pid->offset * 8 == reference_bit_offset("task_struct", "pid", NULL),
	       "pid at %d, BTF says bit %ld", pid->offset,
	       reference_bit_offset("task_struct", "pid", NULL));
	comm = find_field(task, "comm");
	EXPECT(comm && comm->type->kind == TYPE_STRING && comm->type->size == 16,
	       "comm is %s", comm ? type_name(comm->type) : "missing");
	EXPECT(comm->offset * 8 == reference_bit_offset("task_struct", "comm", NULL),
	       "comm at %d", comm->offset);
	parent = find_field(task, "real_parent");
	EXPECT(parent && parent->type->kind == TYPE_POINTER, "real_parent is not a pointer");
	EXPECT(parent->type->pointee == task, "real_parent does not point to the same "
	       "struct task_struct type (one BTF id, one sonde type)");
	EXPECT(btf_type_by_name("struct task_struct") == task, "a second lookup made a new type");
	return true;
}

static bool test_incomplete_then_completed(void)
{
	struct type *task = btf_type_by_name("struct task_struct");
	const struct type_field *mm = find_field(task, "mm");

	EXPECT(mm && mm->type->kind == TYPE_POINTER && mm->type->pointee, "mm is not a pointer");
	struct type *mm_struct = mm->type->pointee;
	EXPECT(strcmp(mm_struct->record_name, "struct mm_struct") == 0, "mm points to %s",
	       mm_struct->record_name);
	if (mm_struct->is_incomplete)
		EXPECT(mm_struct->field_count == 0, "incomplete record with fields");
	btf_complete_record(mm_struct);
	EXPECT(!mm_struct->is_incomplete, "still incomplete");
	/* pgd sits in an anonymous struct on recent kernels: flattened. */
	EXPECT(find_field(mm_struct, "pgd"), "no pgd in struct mm_struct");
	EXPECT(find_field(mm_struct, "mm_users") || find_field(mm_struct, "mm_count"),
	       "no mm_users/mm_count");
	for (int i = 0; i < mm_struct->field_count; i++)
		EXPECT(mm_struct->fields[i].name && mm_struct->fields[i].name[0],
		       "field %d has no name", i);
	return true;
}

static bool test_file_path_chain(void)
{
	struct type *file = btf_type_by_name("struct file");
	const struct type_field *path, *dentry, *name;

	EXPECT(file, "struct file not found");
	path = find_field(file, "f_path");
	EXPECT(path && path->type->kind == TYPE_RECORD &&
	       strcmp(path->type->record_name, "struct path") == 0, "f_path is not a struct path");
	EXPECT(path->offset * 8 == reference_bit_offset("file", "f_path", NULL) ||
	       reference_bit_offset("file", "f_path", NULL) < 0, "f_path at %d", path->offset);
	btf_complete_record(path->type);
	dentry = find_field(path->type, "dentry");
	EXPECT(dentry && dentry->type->kind == TYPE_POINTER && dentry->type->pointee &&
	       strcmp(dentry->type->pointee->record_name, "struct dentry") == 0,
	       "f_path.dentry is not a struct dentry *");
	btf_complete_record(dentry->type->pointee);
	name = find_field(dentry->type->pointee, "d_name");
	EXPECT(name && name->type->kind == TYPE_RECORD, "dentry has no d_name record");
	btf_complete_record(name->type);
	EXPECT(find_field(name->type, "name"), "d_name has no name");
	return true;
}

static bool test_union(void)
{
	struct type *attr = btf_type_by_name("union bpf_attr");
	const struct type_field *map_type, *key_size;

	EXPECT(attr && attr->kind == TYPE_RECORD && attr->is_union, "union bpf_attr not a union");
	EXPECT(strcmp(attr->record_name, "union bpf_attr") == 0, "name %s", attr->record_name);
	/* Members of its anonymous structs are flattened into the union. */
	map_type = find_field(attr, "map_type");
	key_size = find_field(attr, "key_size");
	EXPECT(map_type && map_type->offset == 0, "map_type missing or not at 0");
	EXPECT(key_size && key_size->offset == 4, "key_size missing or not at 4");
	return true;
}

static bool test_bitfields(void)
{
	int id = btf__find_by_name_kind(reference_btf, "task_struct", BTF_KIND_STRUCT);
	const struct btf_type *t = btf__type_by_id(reference_btf, (uint32_t)id);
	struct type *task = btf_type_by_name("struct task_struct");
	int checked = 0;

	for (int i = 0; i < btf_vlen(t); i++) {
		int bits = (int)btf_member_bitfield_size(t, (uint32_t)i);
		const char *name = btf__name_by_offset(reference_btf, btf_members(t)[i].name_off);
		if (!bits || !name || !name[0])
			continue;
		const struct type_field *field = find_field(task, name);
		EXPECT(field, "bitfield %s missing", name);
		EXPECT(field->bitfield_bits == bits, "%s: %d bits, BTF says %d", name,
		       field->bitfield_bits, bits);
		long bit = (long)btf_member_bit_offset(t, (uint32_t)i);
		EXPECT(field->offset * 8L + field->bitfield_offset == bit,
		       "%s: byte %d + bit %d, BTF says bit %ld", name, field->offset,
		       field->bitfield_offset, bit);
		EXPECT(field->bitfield_offset + bits <= field->type->size * 8,
		       "%s does not fit its %d-byte unit", name, field->type->size);
		checked++;
	}
	EXPECT(checked > 0, "task_struct has no bitfields to check");
	return true;
}

static bool test_arrays_and_names(void)
{
	struct type *signal = btf_type_by_name("struct signal_struct");
	const struct type_field *rlim;
	struct type *type;

	EXPECT(signal, "struct signal_struct not found");
	rlim = find_field(signal, "rlim");
	EXPECT(rlim && rlim->type->kind == TYPE_ARRAY, "rlim is not an array");
	EXPECT(rlim->type->pointee && rlim->type->pointee->kind == TYPE_RECORD &&
	       rlim->type->array_length > 0 &&
	       rlim->type->size == rlim->type->array_length * rlim->type->pointee->size,
	       "rlim: %d elements of size %d, total %d", rlim->type->array_length,
	       rlim->type->pointee ? rlim->type->pointee->size : -1, rlim->type->size);

	type = btf_type_by_name("pid_t");
	EXPECT(type && type->kind == TYPE_INT && type->size == 4 && type->is_signed, "pid_t");
	type = btf_type_by_name("u64");
	EXPECT(type && type->kind == TYPE_INT && type->size == 8 && !type->is_signed, "u64");
	type = btf_type_by_name("unsigned long");
	EXPECT(type && type->kind == TYPE_INT && type->size == 8 && !type->is_signed,
	       "unsigned long");
	type = btf_type_by_name("enum pid_type");
	EXPECT(type && type->kind == TYPE_INT && type->size == 4, "enum pid_type");
	EXPECT(!btf_type_by_name("struct sonde_no_such_struct"), "unknown struct found");
	EXPECT(!btf_type_by_name("sonde_no_such_t"), "unknown typedef found");
	return true;
}

static bool test_function_args(void)
{
	struct type *args = NULL, *ret = NULL;
	static const char *const names[] = { "file", "buf", "count", "pos" };
	int id = 0, fd = -1;

	EXPECT(btf_function_args("vfs_read", &args, &ret) == 0, "vfs_read has no BTF");
	EXPECT(args->field_count == 4, "%d params", args->field_count);
	for (int i = 0; i < 4; i++) {
		EXPECT(strcmp(args->fields[i].name, names[i]) == 0, "param %d is %s", i,
		       args->fields[i].name);
		EXPECT(args->fields[i].offset == 8 * i, "param %d at %d", i, args->fields[i].offset);
	}
	EXPECT(args->fields[0].type->kind == TYPE_POINTER && args->fields[0].type->pointee &&
	       strcmp(args->fields[0].type->pointee->record_name, "struct file") == 0,
	       "file is %s", type_name(args->fields[0].type));
	EXPECT(args->size == 32, "size %d", args->size);
	EXPECT(ret && ret->kind == TYPE_INT && ret->size == 8 && ret->is_signed,
	       "ssize_t return is %s", ret ? type_name(ret) : "void");
	EXPECT(btf_function_args("sonde_no_such_function", &args, &ret) == -ENOENT,
	       "unknown function found");
	EXPECT(btf_function_id("vfs_read", &id, &fd) == 0 && id > 0 && fd == 0,
	       "btf_function_id: id %d fd %d", id, fd);
	EXPECT(id == btf__find_by_name_kind(reference_btf, "vfs_read", BTF_KIND_FUNC), "wrong id");
	EXPECT(btf_function_id("sonde_no_such_function", &id, &fd) == -ENOENT, "unknown id found");
	return true;
}

static bool test_tracepoint_args(void)
{
	struct type *args = NULL;
	static const char *const names[] = { "preempt", "prev", "next" };

	EXPECT(btf_tracepoint_args("sched_switch", &args) == 0, "sched_switch has no BTF");
	EXPECT(args->field_count >= 3, "%d args", args->field_count);
	for (int i = 0; i < 3; i++)
		EXPECT(strcmp(args->fields[i].name, names[i]) == 0 && args->fields[i].offset == 8 * i,
		       "arg %d is %s at %d", i, args->fields[i].name, args->fields[i].offset);
	EXPECT(args->fields[1].type->kind == TYPE_POINTER &&
	       args->fields[1].type->pointee == btf_type_by_name("struct task_struct"),
	       "prev is not a struct task_struct *");
	EXPECT(btf_tracepoint_args("sonde_no_such_tracepoint", &args) == -ENOENT,
	       "unknown tracepoint found");
	return true;
}

static bool test_kallsyms(void)
{
	unsigned long long address = 0;

	EXPECT(kallsyms_lookup("vfs_read", &address) == 0 && address != 0,
	       "vfs_read: address %llx", address);
	/* Data symbols are listed only with CONFIG_KALLSYMS_ALL. */
	int err = kallsyms_lookup("init_task", &address);
	EXPECT((err == 0 && address != 0) || err == -ENOENT, "init_task: %d, address %llx", err,
	       address);
	EXPECT(kallsyms_lookup("sonde_no_such_symbol", &address) == -ENOENT, "unknown found");
	/* A prefix of a real name is not that name. */
	EXPECT(kallsyms_lookup("init_tas", &address) == -ENOENT, "prefix matched");
	return true;
}

static bool test_forget_types(void)
{
	btf_type_by_name("struct task_struct");
	type_free_all();
	btf_forget_types();
	struct type *task = btf_type_by_name("struct task_struct");
	EXPECT(task && find_field(task, "pid"), "no task_struct after forgetting");
	return true;
}

/* ---- providers ---- */

static bool test_rawtracepoint_attach(void)
{
	static const struct bpf_insn return_zero[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct probe_spec *written = spec("rawtracepoint:sched_switch");
	probe_point_list points = { 0 };
	fd_list fds = { 0 };
	char *error = NULL;
	int prog_fd, err;

	err = rawtracepoint_provider.expand(written, &points, &error);
	probe_spec_free(written);
	EXPECT(err == 0 && points.count == 1, "expand: %s", error ? error : "wrong count");
	struct probe_point *point = points.items[0];
	EXPECT(strcmp(point->name, "rawtracepoint:sched_switch") == 0, "name %s", point->name);
	EXPECT(rawtracepoint_provider.describe(point, &error) == 0, "describe: %s", error);
	EXPECT(point->args_access == ARGS_U64_ARRAY &&
	       (point->features & (PROBE_HAS_ARGS | PROBE_HAS_ARGN)) ==
		       (PROBE_HAS_ARGS | PROBE_HAS_ARGN),
	       "features %x", point->features);
	EXPECT(find_field(point->args_type, "prev") && point->arg_count >= 3, "args");

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "sonde_test", "GPL", return_zero, 2,
				NULL);
	EXPECT(prog_fd >= 0, "loading a raw tracepoint program: %s", strerror(errno));
	err = rawtracepoint_provider.attach(point, prog_fd, &fds, &error);
	close(prog_fd);
	EXPECT(err == 0 && fds.count == 1, "attach: %s", error ? error : "no fd");
	close(fds.items[0]);
	free(fds.items);
	free_points(&points);
	return true;
}

static bool test_rawtracepoint_expand(void)
{
	static const char *const texts[] = { "rt:sched_sw*", "rawtracepoint:vmlinux:sched_switch" };
	probe_point_list points = { 0 };
	char *error = NULL;

	for (int i = 0; i < 2; i++) {
		struct probe_spec *written = spec(texts[i]);
		int err = rawtracepoint_provider.expand(written, &points, &error);
		probe_spec_free(written);
		EXPECT(err == 0 && points.count >= 1, "%s: %s", texts[i], error);
	}
	EXPECT(strcmp(points.items[points.count - 1]->name,
		      "rawtracepoint:vmlinux:sched_switch") == 0, "module form named %s",
	       points.items[points.count - 1]->name);
	free_points(&points);

	struct probe_spec *written = spec("rawtracepoint:sonde_no_such_tp");
	int err = rawtracepoint_provider.expand(written, &points, &error);
	probe_spec_free(written);
	EXPECT(err == -ENOENT && error && strstr(error, "not found"), "unknown: %d %s", err,
	       error ? error : "");
	free(error);
	return true;
}

/* kprobes and fentry, whichever this kernel has: real points, or one clear
 * error naming why when it has neither. */
static bool test_kernel_function_providers(void)
{
	static const char *const texts[] = { "kprobe:vfs_read", "kretprobe:vfs_read",
					     "fentry:vfs_read", "fexit:vfs_read" };
	const struct provider *providers[] = { &kprobe_provider, &kretprobe_provider,
					       &fentry_provider, &fexit_provider };
	bool possible = feature_available(FEATURE_KPROBE) || feature_available(FEATURE_FENTRY);

	for (int i = 0; i < 4; i++) {
		probe_point_list points = { 0 };
		char *error = NULL;
		struct probe_spec *written = spec(texts[i]);
		int err = providers[i]->expand(written, &points, &error);
		probe_spec_free(written);
		/* unavailable: the point is made all the same (the compiler checks
		 * the body against it), and says why it cannot be attached */
		EXPECT(err == 0 && points.count == 1, "%s: %s", texts[i], error);
		struct probe_point *point = points.items[0];
		EXPECT(possible ? !point->unavailable
				: point->unavailable && strstr(point->unavailable,
								"not available on this kernel"),
		       "%s: unavailable: %s", texts[i], point->unavailable ? point->unavailable : "");
		EXPECT(strcmp(point->name, texts[i]) == 0, "named %s", point->name);
		EXPECT(point->provider->describe(point, &error) == 0, "describe: %s", error);
		EXPECT(point->features & PROBE_HAS_FUNC, "%s: no func", texts[i]);
		free_points(&points);
	}
	return true;
}

/* Loads `r0 = 0; exit` the way the runtime would for point (prepare_load
 * included) and attaches it; the fds are closed again. */
static bool load_and_attach(const struct probe_point *point)
{
	static const struct bpf_insn return_zero[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const struct provider *provider = point->provider;
	uint32_t attach_type = 0, btf_id = 0;
	int btf_fd = 0, prog_fd, err;
	fd_list fds = { 0 };
	char *error = NULL;

	if (provider->prepare_load)
		EXPECT(provider->prepare_load(point, &attach_type, &btf_id, &btf_fd, &error) == 0,
		       "%s: prepare_load: %s", point->name, error);
	LIBBPF_OPTS(bpf_prog_load_opts, options, .expected_attach_type = attach_type,
		    .attach_btf_id = btf_id, .attach_btf_obj_fd = (uint32_t)btf_fd);
	prog_fd = bpf_prog_load(provider->prog_type, "sonde_test", "GPL", return_zero, 2, &options);
	EXPECT(prog_fd >= 0, "%s: load: %s", point->name, strerror(errno));
	err = provider->attach(point, prog_fd, &fds, &error);
	close(prog_fd);
	EXPECT(err == 0 && fds.count > 0, "%s: attach: %s", point->name, error);
	for (int i = 0; i < fds.count; i++)
		close(fds.items[i]);
	free(fds.items);
	return true;
}

/* On kernels that have them (the VM tests), each of the four really attaches. */
static bool test_kernel_function_attach(void)
{
	static const char *const texts[] = { "kprobe:vfs_read", "kretprobe:vfs_read",
					     "fentry:vfs_read", "fexit:vfs_read",
					     "kprobe:vfs_read+0", "kprobe:vmlinux:vfs_read" };
	const struct provider *providers[] = { &kprobe_provider, &kretprobe_provider,
					       &fentry_provider, &fexit_provider,
					       &kprobe_provider, &kprobe_provider };
	int attached = 0;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		probe_point_list points = { 0 };
		char *error = NULL;
		struct probe_spec *written = spec(texts[i]);
		int err = providers[i]->expand(written, &points, &error);
		probe_spec_free(written);
		if (err || (points.count && points.items[0]->unavailable)) {
			free(error);
			free_points(&points);
			continue; /* checked by the previous test */
		}
		for (int j = 0; j < points.count; j++) {
			EXPECT(points.items[j]->provider->describe(points.items[j], &error) == 0, "describe: %s",
			       error);
			if (!load_and_attach(points.items[j]))
				return false;
			attached++;
		}
		free_points(&points);
	}
	if (!attached)
		printf("  (kprobe and fentry are both unavailable here: nothing to attach)\n");
	return true;
}

/* A wildcard expands to one point per function, each attachable. */
static bool test_kprobe_wildcard(void)
{
	probe_point_list points = { 0 };
	char *error = NULL;
	struct probe_spec *written = spec("kprobe:vfs_rea*");
	int err = kprobe_provider.expand(written, &points, &error);

	probe_spec_free(written);
	if (!feature_available(FEATURE_KPROBE) && !feature_available(FEATURE_FENTRY)) {
		free(error);
		return true;
	}
	EXPECT(err == 0 && points.count >= 2, "expand: %s", error);
	for (int i = 0; i < points.count; i++) {
		EXPECT(points.items[i]->function || points.items[i]->function_count,
		       "point without a function");
		if (feature_available(FEATURE_KPROBE))
			EXPECT(strncmp(points.items[i]->name, "kprobe:vfs_rea", 14) == 0, "named %s",
			       points.items[i]->name);
		EXPECT(points.items[i]->provider->describe(points.items[i], &error) == 0,
		       "describe: %s", error);
	}
	bool attached = load_and_attach(points.items[0]);
	free_points(&points);
	return attached;
}

/* The stand-in expansions used when a kernel has only one of the two
 * families: names stay as written, the provider is the one that traces,
 * and describing through the written provider reaches the real one. */
static bool test_stand_ins(void)
{
	probe_point_list points = { 0 };
	char *error = NULL;
	struct probe_spec *written = spec("kprobe:vfs_read");
	int err = fentry_expand_points(written, false, &points, &error);

	probe_spec_free(written);
	EXPECT(err == 0 && points.count == 1, "kprobe as fentry: %s", error);
	EXPECT(strcmp(points.items[0]->name, "kprobe:vfs_read") == 0 &&
	       points.items[0]->provider == &fentry_provider, "%s by %s", points.items[0]->name,
	       points.items[0]->provider->name);
	EXPECT(points.items[0]->provider->describe(points.items[0], &error) == 0, "describe: %s", error);
	EXPECT(points.items[0]->args_access == ARGS_U64_ARRAY && points.items[0]->args_type,
	       "not described as fentry");
	free_points(&points);

	written = spec("fexit:vfs_read");
	err = kprobe_expand_points(written, true, &points, &error);
	probe_spec_free(written);
	if (err == -ENOENT) {
		/* Neither listed nor in kallsyms here: nothing to stand in with. */
		free(error);
		return true;
	}
	EXPECT(err == 0 && points.count == 1, "fexit as kretprobe: %s", error);
	EXPECT(strcmp(points.items[0]->name, "fexit:vfs_read") == 0 &&
	       points.items[0]->provider == &kretprobe_provider, "%s by %s",
	       points.items[0]->name, points.items[0]->provider->name);
	EXPECT(points.items[0]->provider->describe(points.items[0], &error) == 0, "describe: %s", error);
	EXPECT(points.items[0]->args_access == ARGS_PT_REGS &&
	       points.items[0]->retval_location.register_offset == PT_REGS_AX,
	       "not described as kretprobe");
	free_points(&points);
	return true;
}

/* fentry expansion and description work from BTF alone, so they can be
 * checked even where fentry programs cannot be loaded. */
static bool test_fentry_points(void)
{
	probe_point_list points = { 0 };
	char *error = NULL;
	struct probe_spec *written = spec("fexit:vfs_read");
	int err = fentry_expand_points(written, true, &points, &error);
	uint32_t attach_type = 0, btf_id = 0;
	int btf_fd = -1;

	probe_spec_free(written);
	EXPECT(err == 0 && points.count == 1, "expand: %s", error);
	struct probe_point *point = points.items[0];
	EXPECT(point->provider == &fexit_provider, "wrong provider %s", point->provider->name);
	EXPECT(fexit_provider.describe(point, &error) == 0, "describe: %s", error);
	EXPECT(point->args_access == ARGS_U64_ARRAY && point->arg_count == 4, "arg_count %d",
	       point->arg_count);
	EXPECT(point->features & PROBE_HAS_RETVAL, "no retval");
	EXPECT(point->retval_location.kind == ARG_LOCATION_REGISTER &&
	       point->retval_location.register_offset == 32 && point->retval_location.size == 8 &&
	       point->retval_location.is_signed, "retval slot %d size %d",
	       point->retval_location.register_offset, point->retval_location.size);
	EXPECT(find_field(point->args_type, "count"), "no args.count");
	EXPECT(fexit_provider.prepare_load(point, &attach_type, &btf_id, &btf_fd, &error) == 0,
	       "prepare_load: %s", error);
	EXPECT(attach_type == BPF_TRACE_FEXIT && btf_id > 0 && btf_fd == 0,
	       "load: type %u id %u fd %d", attach_type, btf_id, btf_fd);
	free_points(&points);

	written = spec("fentry:vfs_rea*");
	err = fentry_expand_points(written, false, &points, &error);
	probe_spec_free(written);
	EXPECT(err == 0 && points.count >= 2, "wildcard: %s", error);
	bool found = false;
	for (int i = 0; i < points.count; i++)
		found = found || strcmp(points.items[i]->name, "fentry:vfs_read") == 0;
	EXPECT(found, "fentry:vfs_rea* does not include vfs_read");
	free_points(&points);

	written = spec("fentry:sonde_no_such_function");
	err = fentry_expand_points(written, false, &points, &error);
	probe_spec_free(written);
	EXPECT(err == -ESRCH && error && strstr(error, "no BTF"), "unknown: %s", error);
	free(error);
	return true;
}

static bool test_kprobe_describe(void)
{
	struct probe_point *point = probe_point_new(&kprobe_provider, "kprobe:vfs_read");
	char *error = NULL;

	point->function = xstrdup("vfs_read");
	EXPECT(kprobe_provider.describe(point, &error) == 0, "describe: %s", error);
	EXPECT(point->args_access == ARGS_PT_REGS && point->arg_count == 6, "arg_count %d",
	       point->arg_count);
	EXPECT(point->arg_locations[0].register_offset == PT_REGS_DI &&
	       point->arg_locations[5].register_offset == PT_REGS_R9, "argument registers");
	probe_point_free(point);

	point = probe_point_new(&kretprobe_provider, "kretprobe:vfs_read");
	point->function = xstrdup("vfs_read");
	EXPECT(kretprobe_provider.describe(point, &error) == 0, "describe: %s", error);
	EXPECT((point->features & PROBE_HAS_RETVAL) &&
	       point->retval_location.register_offset == PT_REGS_AX, "retval in ax");
	probe_point_free(point);
	return true;
}

static bool test_hardware(void)
{
	probe_point_list points = { 0 };
	char *error = NULL;
	struct probe_spec *written = spec("hardware:cycles:1000000");
	int err = hardware_provider.expand(written, &points, &error);

	probe_spec_free(written);
	if (feature_available(FEATURE_HARDWARE)) {
		EXPECT(err == 0 && points.count == 1 && points.items[0]->period == 1000000,
		       "expand: %s", error);
	} else {
		EXPECT(err < 0 && error && strstr(error, "hardware events are not available"),
		       "no PMU: %s", error ? error : "no error");
	}
	free(error);
	error = NULL;
	free_points(&points);
	written = spec("hardware:sonde-no-such-event");
	err = hardware_provider.expand(written, &points, &error);
	probe_spec_free(written);
	EXPECT(err == -EINVAL && error && strstr(error, "is not a hardware event"), "%s", error);
	free(error);
	return true;
}

/* The BTF fallback for tracepoint args must agree with the format file:
 * same names at the same offsets, for every field the format file has. */
static bool test_tracepoint_record_matches_format(void)
{
	const char *events[][2] = { { "sched", "sched_switch" }, { "sched", "sched_process_exec" },
				    { "signal", "signal_generate" }, { "sched", "sched_process_fork" } };
	for (size_t e = 0; e < sizeof(events) / sizeof(events[0]); e++) {
		struct tracepoint_format format;
		char *error = NULL;
		EXPECT(tracefs_read_format(events[e][0], events[e][1], &format, &error) == 0,
		       "format of %s: %s", events[e][1], error ? error : "?");
		struct type *record = NULL;
		EXPECT(btf_tracepoint_record(events[e][1], &record) == 0, "no BTF record for %s",
		       events[e][1]);
		for (int i = 0; i < format.record->field_count; i++) {
			const struct type_field *want = &format.record->fields[i];
			bool found = false;
			for (int j = 0; j < record->field_count && !found; j++) {
				const struct type_field *got = &record->fields[j];
				/* BTF spells __data_loc fields __data_loc_NAME */
				bool same = strcmp(got->name, want->name) == 0 ||
					    (strncmp(got->name, "__data_loc_", 11) == 0 &&
					     strcmp(got->name + 11, want->name) == 0);
				if (same) {
					EXPECT(got->offset == want->offset, "%s.%s at %d in BTF, %d in format",
					       events[e][1], want->name, got->offset, want->offset);
					found = true;
				}
			}
			EXPECT(found, "%s.%s missing from the BTF record", events[e][1], want->name);
		}
		tracepoint_format_free(&format);
	}
	EXPECT(btf_tracepoint_record("sonde_no_such_event", &(struct type *){ NULL }) == -ENOENT,
	       "unknown event found");
	return true;
}

/* ---- btf_file: the in-place reader against libbpf ---- */

/* Bytes of the record at t, as libbpf lays records out. */
static size_t record_bytes(const struct btf_type *t)
{
	size_t count = btf_vlen(t);

	switch (btf_kind(t)) {
	case BTF_KIND_INT: return sizeof(*t) + 4;
	case BTF_KIND_ARRAY: return sizeof(*t) + sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION: return sizeof(*t) + count * sizeof(struct btf_member);
	case BTF_KIND_ENUM: return sizeof(*t) + count * sizeof(struct btf_enum);
	case BTF_KIND_ENUM64: return sizeof(*t) + count * sizeof(struct btf_enum64);
	case BTF_KIND_FUNC_PROTO: return sizeof(*t) + count * sizeof(struct btf_param);
	case BTF_KIND_VAR: return sizeof(*t) + sizeof(struct btf_var);
	case BTF_KIND_DATASEC: return sizeof(*t) + count * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG: return sizeof(*t) + sizeof(struct btf_decl_tag);
	default: return sizeof(*t);
	}
}

/* Every id: the same record bytes and the same name as libbpf's. */
static bool same_types(const struct btf *expected, const struct btf_file *got, uint32_t first)
{
	uint32_t count = btf__type_cnt(expected);

	EXPECT(btf_file_type_count(got) == count, "%u types, libbpf has %u",
	       btf_file_type_count(got), count);
	EXPECT(btf_file_type(got, count) == NULL, "type %u past the end is not NULL", count);
	EXPECT(btf_file_type(got, 0) && btf_kind(btf_file_type(got, 0)) == BTF_KIND_UNKN,
	       "id 0 is not void");
	for (uint32_t id = first; id < count; id++) {
		const struct btf_type *want = btf__type_by_id(expected, id);
		const struct btf_type *have = btf_file_type(got, id);
		EXPECT(have, "type %u missing", id);
		EXPECT(memcmp(want, have, record_bytes(want)) == 0, "type %u differs", id);
		const char *want_name = btf__name_by_offset(expected, want->name_off);
		const char *have_name = btf_file_name(got, have->name_off);
		EXPECT(want_name && have_name && strcmp(want_name, have_name) == 0,
		       "type %u named %s, libbpf says %s", id, have_name ? have_name : "(null)",
		       want_name ? want_name : "(null)");
	}
	return true;
}

static bool test_vmlinux_types(void)
{
	return same_types(reference_btf, vmlinux_file, 1);
}

static bool test_vmlinux_names(void)
{
	const struct btf_header *header = btf__raw_data(reference_btf, &(uint32_t){ 0 });

	EXPECT(btf_file_name(vmlinux_file, 0) && btf_file_name(vmlinux_file, 0)[0] == '\0', "offset 0 is not \"\"");
	EXPECT(btf_file_name(vmlinux_file, header->str_len - 1) != NULL, "last string offset refused");
	EXPECT(btf_file_name(vmlinux_file, header->str_len) == NULL, "offset past the strings accepted");
	return true;
}

/* Some 1,000 names of every kind, plus names that are not there: the first
 * few dozen found by walking the types, the rest through the name index the
 * file builds after NAME_INDEX_AFTER walks. */
static bool test_vmlinux_find(void)
{
	uint32_t count = btf__type_cnt(reference_btf);
	int checked = 0;

	for (uint32_t id = 1; id < count; id += 127) {
		const struct btf_type *t = btf__type_by_id(reference_btf, id);
		const char *name = btf__name_by_offset(reference_btf, t->name_off);
		if (!name || !name[0])
			continue;
		int want = btf__find_by_name_kind(reference_btf, name, btf_kind(t));
		int have = btf_file_find(vmlinux_file, name, (int)btf_kind(t));
		EXPECT(want == have, "%s (kind %u): %d, libbpf %d", name, btf_kind(t), have, want);
		checked++;
	}
	EXPECT(checked > 100, "only %d names checked", checked);
	EXPECT(btf_file_find(vmlinux_file, "task_struct", BTF_KIND_STRUCT) ==
	       btf__find_by_name_kind(reference_btf, "task_struct", BTF_KIND_STRUCT), "task_struct");
	EXPECT(btf_file_find(vmlinux_file, "task_struct", BTF_KIND_UNION) == -ENOENT,
	       "union task_struct found");
	EXPECT(btf_file_find(vmlinux_file, "sonde_no_such_type", BTF_KIND_STRUCT) == -ENOENT,
	       "unknown name found");
	EXPECT(btf_file_find(vmlinux_file, "void", BTF_KIND_TYPEDEF) == 0, "void is not 0");
	return true;
}

static bool test_vmlinux_sizes(void)
{
	uint32_t count = btf__type_cnt(reference_btf);

	for (uint32_t id = 0; id < count; id++) {
		long want = btf__resolve_size(reference_btf, id);
		long have = btf_file_resolve_size(vmlinux_file, id);
		EXPECT(want == have || (want < 0 && have < 0), "type %u: size %ld, libbpf %ld", id,
		       have, want);
	}
	return true;
}

/* The first enum (lowest id) with an enumerator of that name, by libbpf. */
static int reference_enumerator(const char *name, int *index)
{
	uint32_t count = btf__type_cnt(reference_btf);

	for (uint32_t id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(reference_btf, id);
		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (int i = 0; i < btf_vlen(t); i++) {
			uint32_t offset = btf_is_enum(t) ? btf_enum(t)[i].name_off : btf_enum64(t)[i].name_off;
			if (strcmp(btf__name_by_offset(reference_btf, offset), name) == 0) {
				*index = i;
				return (int)id;
			}
		}
	}
	return -ENOENT;
}

static bool test_vmlinux_enumerators(void)
{
	uint32_t count = btf__type_cnt(reference_btf);
	int seen = 0, checked = 0;

	for (uint32_t id = 1; id < count; id++) {
		const struct btf_type *t = btf__type_by_id(reference_btf, id);
		if (!btf_is_enum(t) && !btf_is_enum64(t))
			continue;
		for (int i = 0; i < btf_vlen(t); i++) {
			if (seen++ % 61)
				continue;
			uint32_t offset = btf_is_enum(t) ? btf_enum(t)[i].name_off : btf_enum64(t)[i].name_off;
			const char *name = btf__name_by_offset(reference_btf, offset);
			int want_index = -1, have_index = -1;
			int want = reference_enumerator(name, &want_index);
			int have = btf_file_enum_constant(vmlinux_file, name, &have_index);
			EXPECT(want == have && want_index == have_index, "%s: enum %d #%d, libbpf %d #%d",
			       name, have, have_index, want, want_index);
			checked++;
		}
	}
	EXPECT(checked > 50, "only %d enumerators checked", checked);
	int index;
	EXPECT(btf_file_enum_constant(vmlinux_file, "sonde_no_such_constant", &index) == -ENOENT,
	       "unknown constant found");
	return true;
}

/* A module's shape: a few types on top of vmlinux, one of them named like
 * a vmlinux type (the base's comes first), one pointing into the base. */
static bool test_split(void)
{
	struct btf *split = btf__new_empty_split(reference_btf);
	int task = btf__find_by_name_kind(reference_btf, "task_struct", BTF_KIND_STRUCT);

	EXPECT(split, "libbpf cannot make a split BTF");
	int u32_id = btf__add_int(split, "sonde_u32", 4, 0);
	int pointer = btf__add_ptr(split, task);
	int record = btf__add_struct(split, "sonde_module_struct", 16);
	btf__add_field(split, "count", u32_id, 0, 0);
	btf__add_field(split, "task", pointer, 64, 0);
	btf__add_struct(split, "task_struct", 8);
	int enumeration = btf__add_enum(split, "sonde_module_enum", 4);
	btf__add_enum_value(split, "SONDE_MODULE_ONE", 1);
	btf__add_enum_value(split, "SONDE_MODULE_TWO", 2);
	uint32_t size;
	const void *data = btf__raw_data(split, &size);
	struct btf_file *module = NULL;
	int err = data ? btf_file_from_memory(data, size, vmlinux_file, &module) : -EINVAL;
	bool ok = false;

	if (err < 0) {
		snprintf(why, sizeof(why), "split BTF refused: %s", strerror(-err));
		goto out;
	}
	if (!same_types(split, module, btf__type_cnt(reference_btf)))
		goto out;
	if (btf_file_first_id(module) != btf__type_cnt(reference_btf)) {
		snprintf(why, sizeof(why), "first id %u", btf_file_first_id(module));
		goto out;
	}
	/* base ids and names answered through the module */
	const struct btf_type *base_task = btf_file_type(module, (uint32_t)task);
	if (!base_task || strcmp(btf_file_name(module, base_task->name_off), "task_struct") != 0) {
		snprintf(why, sizeof(why), "base type through the module");
		goto out;
	}
	if (btf_file_find(module, "sonde_module_struct", BTF_KIND_STRUCT) != record ||
	    btf_file_find(module, "task_struct", BTF_KIND_STRUCT) != task ||
	    btf_file_find(module, "sonde_u32", BTF_KIND_INT) != u32_id) {
		snprintf(why, sizeof(why), "name search in the module");
		goto out;
	}
	if (btf_file_resolve_size(module, (uint32_t)record) != 16 ||
	    btf_file_resolve_size(module, (uint32_t)pointer) != 8) {
		snprintf(why, sizeof(why), "sizes in the module");
		goto out;
	}
	int index = -1;
	if (btf_file_enum_constant(module, "SONDE_MODULE_TWO", &index) != enumeration || index != 1) {
		snprintf(why, sizeof(why), "module enumerator");
		goto out;
	}
	ok = true;
out:
	btf_file_free(module);
	btf__free(split);
	return ok;
}

/* A small standalone BTF, then broken copies of it. */
static bool test_broken(void)
{
	struct btf *small = btf__new_empty();
	int int_id = btf__add_int(small, "int", 4, BTF_INT_SIGNED);
	btf__add_struct(small, "pair", 8);
	btf__add_field(small, "a", int_id, 0, 0);
	btf__add_field(small, "b", int_id, 32, 0);
	uint32_t size;
	const unsigned char *data = btf__raw_data(small, &size);
	unsigned char *copy = malloc(size);
	struct btf_file *parsed = NULL;
	struct btf_header *header = (struct btf_header *)copy;
	bool ok = false;

	if (btf_file_from_memory(data, size, NULL, &parsed) < 0 || btf_file_type_count(parsed) != 3 ||
	    btf_file_find(parsed, "pair", BTF_KIND_STRUCT) != 2 ||
	    btf_file_resolve_size(parsed, 2) != 8) {
		snprintf(why, sizeof(why), "the intact blob is not read right");
		goto out;
	}
	btf_file_free(parsed);
	parsed = NULL;
	static const char *const cases[] = { "truncated", "bad magic", "type section past the end",
					     "last record cut", "unknown kind", "strings unterminated" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(copy, data, size);
		uint32_t length = size;
		const unsigned char *types = copy + header->hdr_len + header->type_off;
		struct btf_type *second = (struct btf_type *)(types + sizeof(struct btf_type) + 4);
		switch (i) {
		case 0: length = 10; break;
		case 1: header->magic = 0x1234; break;
		case 2: header->type_len = size; break;
		case 3: header->type_len -= 4; break;
		case 4: second->info = (31u << 24) | 2; break;
		case 5: copy[header->hdr_len + header->str_off + header->str_len - 1] = 'x'; break;
		}
		int err = btf_file_from_memory(copy, length, NULL, &parsed);
		if (err != -EINVAL) {
			snprintf(why, sizeof(why), "%s: %d, want -EINVAL", cases[i], err);
			btf_file_free(parsed);
			goto out;
		}
	}
	ok = true;
out:
	btf_file_free(parsed);
	free(copy);
	btf__free(small);
	return ok;
}

int main(void)
{
	reference_btf = btf__load_vmlinux_btf();
	if (!reference_btf) {
		printf("FAIL setup: cannot read kernel BTF\n0 passed, 1 failed\n");
		return 1;
	}
	if (btf_file_open("/sys/kernel/btf/vmlinux", NULL, &vmlinux_file) < 0) {
		printf("FAIL setup: btf_file cannot read /sys/kernel/btf/vmlinux\n0 passed, 1 failed\n");
		return 1;
	}
	run("btf_file: every vmlinux type record and name as libbpf's", test_vmlinux_types);
	run("btf_file: string offsets and their bounds", test_vmlinux_names);
	run("btf_file: name search as btf__find_by_name_kind", test_vmlinux_find);
	run("btf_file: every size as btf__resolve_size", test_vmlinux_sizes);
	run("btf_file: enumerators, first enum wins", test_vmlinux_enumerators);
	run("btf_file: split BTF on vmlinux, as a module's", test_split);
	run("btf_file: broken blobs refused", test_broken);
	run("btf available", test_available);
	run("task_struct pid/comm/real_parent", test_task_struct);
	run("incomplete record completed, anonymous members flattened",
	    test_incomplete_then_completed);
	run("file -> f_path.dentry -> d_name", test_file_path_chain);
	run("union bpf_attr", test_union);
	run("bitfields match BTF", test_bitfields);
	run("arrays, typedefs, integer names", test_arrays_and_names);
	run("btf_function_args(vfs_read)", test_function_args);
	run("btf_tracepoint_args(sched_switch)", test_tracepoint_args);
	run("kallsyms_lookup", test_kallsyms);
	run("btf_forget_types after type_free_all", test_forget_types);
	run("rawtracepoint attach sched_switch", test_rawtracepoint_attach);
	run("rawtracepoint wildcard, module form, unknown", test_rawtracepoint_expand);
	run("kprobe/fentry providers or their error", test_kernel_function_providers);
	run("kprobe/fentry attach where available", test_kernel_function_attach);
	run("kprobe wildcard", test_kprobe_wildcard);
	run("fentry points from BTF", test_fentry_points);
	run("kprobe <-> fentry stand-ins", test_stand_ins);
	run("kprobe argument registers", test_kprobe_describe);
	run("hardware expand", test_hardware);
	run("tracepoint record from BTF matches the format file", test_tracepoint_record_matches_format);
	btf_file_free(vmlinux_file);
	btf__free(reference_btf);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
