/* SPDX-License-Identifier: Apache-2.0 */
/*
 * uprobe:BINARY:FUNCTION and uretprobe:BINARY:FUNCTION — breakpoints in
 * user-space code, at a function's entry or on its return.
 *
 * BINARY is a path, or a name resolved like the dynamic linker would
 * ("libc" → /lib/x86_64-linux-gnu/libc.so.6) and then on $PATH ("bash").
 * FUNCTION is a symbol name (wildcards expand to one point per matching
 * function), SYMBOL+OFFSET, or a raw address (0x401234). Whatever is
 * written, it comes down to a file offset: the kernel places a uprobe on
 * an inode at an offset, so one probe covers every process that maps the
 * file, PIE or not, wherever it is loaded.
 *
 * SYMBOL+OFFSET and raw addresses are only checked to be inside the
 * function / in code, not to start an instruction: that needs an x86
 * instruction decoder, which sonde does not have (bpftrace uses LLVM's).
 * A breakpoint in the middle of an instruction corrupts the traced program.
 *
 * Arguments follow the x86-64 System V calling convention: arg0..arg5 are
 * rdi, rsi, rdx, rcx, r8, r9 in the pt_regs the program receives, retval
 * is rax. These hold only at a function's first instruction (and at its
 * return for retval); at an offset into a function they are whatever the
 * registers hold then, as in bpftrace.
 *
 * Attaching uses the uprobe PMU of perf_event_open (no tracefs writes, and
 * the probe disappears with the fd): type from sysfs, config1 = the path,
 * config2 = the offset, a "retprobe" config bit, and for USDT semaphores a
 * reference-counter offset field, whose bit positions sysfs also gives.
 * usdt.c attaches through the same function. A wildcard's points go
 * through one uprobe_multi link instead when the kernel has them
 * (uprobe_multi.c).
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "../kernel/elf.h"
#include "../kernel/attach.h"
#include "../kernel/pmu.h"

extern const struct provider uprobe_provider;
extern const struct provider uretprobe_provider;

/* ---- specs ---- */

/* "0x401234" or "4198964": a raw address rather than a symbol. */
static bool parse_address(const char *text, uint64_t *address)
{
	char *end;

	if (!isdigit((unsigned char)text[0]))
		return false;
	errno = 0;
	*address = strtoull(text, &end, 0);
	return errno == 0 && *end == '\0';
}

/* "func+0x10" → "func" and 0x10; false when there is no "+N" suffix. */
static bool split_offset(const char *text, char **symbol, uint64_t *offset)
{
	const char *plus = strrchr(text, '+');
	char *end;

	if (!plus || plus == text || !isdigit((unsigned char)plus[1]))
		return false;
	errno = 0;
	*offset = strtoull(plus + 1, &end, 0);
	if (errno || *end != '\0')
		return false;
	*symbol = xstrndup(text, (size_t)(plus - text));
	return true;
}

/* The function part: everything after the binary, colons included (so
 * "uprobe:/bin/x:a:b" means the symbol "a:b", not four parts). */
static char *function_part(const struct probe_spec *spec)
{
	struct strbuf sb;

	strbuf_init(&sb);
	for (int i = 1; i < spec->part_count; i++) {
		if (i > 1)
			strbuf_putc(&sb, ':');
		strbuf_puts(&sb, spec->parts[i]);
	}
	return strbuf_release(&sb);
}

/* Sets the calling convention's argument and return registers. */
static void set_calling_convention(struct probe_point *point, bool retprobe)
{
	const int count = ARCH_ARGUMENT_REGISTERS;

	point->args_access = ARGS_PT_REGS;
	point->arg_count = count;
	point->arg_locations = xcalloc((size_t)count, sizeof(*point->arg_locations));
	for (int i = 0; i < count; i++) {
		point->arg_locations[i] = (struct arg_location){
			.kind = ARG_LOCATION_REGISTER, .register_offset = arch_call_arguments[i],
			.index_offset = -1, .scale = 1, .size = 8,
		};
	}
	point->retval_location = (struct arg_location){
		.kind = ARG_LOCATION_REGISTER, .register_offset = ARCH_RETURN_VALUE,
		.index_offset = -1, .scale = 1, .size = 8,
	};
	point->features = retprobe ? (PROBE_HAS_RETVAL | PROBE_HAS_FUNC)
				   : (PROBE_HAS_ARGN | PROBE_HAS_FUNC);
}

static void add_point(const struct provider *provider, const char *path, const char *written,
		      const char *function, uint64_t offset, probe_point_list *out)
{
	bool retprobe = provider == &uretprobe_provider;
	char *name = xasprintf("%s:%s:%s", provider->name, path, written);
	struct probe_point *point = probe_point_new(provider, name);

	free(name);
	point->function = xstrdup(function);
	point->binary_path = xstrdup(path);
	point->binary_offset = offset;
	set_calling_convention(point, retprobe);
	vec_push(out, point);
}

/* The function symbol that contains address, if any. */
static const struct elf_symbol *symbol_at(const elf_symbol_list *functions, uint64_t address)
{
	for (int i = 0; i < functions->count; i++) {
		const struct elf_symbol *symbol = &functions->items[i];
		if (address >= symbol->address && address < symbol->address + symbol->size)
			return symbol;
	}
	return NULL;
}

static int expand_in_object(const struct provider *provider, struct elf_object *object,
			    const char *path, const char *function, probe_point_list *out,
			    char **error)
{
	elf_symbol_list functions = { 0 };
	uint64_t address, offset, delta = 0;
	char *symbol_name = NULL;
	int err = 0;

	elf_object_functions(object, &functions);
	if (has_wildcard(function)) {
		int matched = 0, first = out->count;
		for (int i = 0; i < functions.count; i++) {
			const struct elf_symbol *symbol = &functions.items[i];
			if (!wildcard_match(function, symbol->name) ||
			    elf_object_address_to_offset(object, symbol->address, &offset) < 0)
				continue;
			add_point(provider, path, symbol->name, symbol->name, offset, out);
			matched++;
		}
		if (matched == 0) {
			*error = xasprintf("no function in %s matches '%s'", path, function);
			err = -ESRCH;
		}
		uprobe_multi_gather(out, first, provider == &uretprobe_provider);
	} else if (parse_address(function, &address)) {
		const struct elf_symbol *symbol = symbol_at(&functions, address);
		if (!elf_object_address_is_code(object, address) ||
		    elf_object_address_to_offset(object, address, &offset) < 0) {
			*error = xasprintf("address %s is not in the code of %s", function, path);
			err = -ENOENT;
		} else {
			add_point(provider, path, function, symbol ? symbol->name : function, offset,
				  out);
		}
	} else {
		bool with_offset = split_offset(function, &symbol_name, &delta);
		const char *wanted = with_offset ? symbol_name : function;
		const struct elf_symbol *found = NULL;

		for (int i = 0; i < functions.count && !found; i++) {
			if (strcmp(functions.items[i].name, wanted) == 0)
				found = &functions.items[i];
		}
		if (!found) {
			*error = xasprintf("function '%s' not found in %s", wanted, path);
			err = -ESRCH;
		} else if (with_offset && delta >= found->size) {
			*error = xasprintf("offset %s+%" PRIu64 " is past the end of %s (%" PRIu64
					   " bytes)", wanted, delta, wanted, found->size);
			err = -EINVAL;
		} else if (elf_object_address_to_offset(object, found->address + delta, &offset) < 0) {
			*error = xasprintf("function '%s' in %s is not in any loadable segment",
					   wanted, path);
			err = -ENOENT;
		} else {
			add_point(provider, path, function, wanted, offset, out);
		}
	}
	free(symbol_name);
	elf_symbol_list_free(&functions);
	return err;
}

/* The path to show and attach to: a written path stays as written (like
 * bpftrace), a library or program name becomes the file it resolves to. */
static int resolve_target(const char *kind, const char *binary, char **path, char **error)
{
	if (elf_resolve_binary(binary, 0, path) < 0) {
		*error = xasprintf("%s target file '%s' does not exist or is not readable", kind,
				   binary);
		return -ENOENT;
	}
	return 0;
}

static int uprobe_expand_common(const struct provider *provider, const struct probe_spec *spec,
				probe_point_list *out, char **error)
{
	const char *kind = provider->name;
	struct elf_object *object;
	char *path = NULL, *function;
	int err;

	if (spec->part_count < 2 || !spec->parts[0][0] || !spec->parts[1][0]) {
		*error = xasprintf("%s probes are written %s:BINARY:FUNCTION (e.g. "
				   "%s:/bin/bash:readline, %s:libc:malloc)",
				   kind, kind, kind, kind);
		return -EINVAL;
	}
	if (has_wildcard(spec->parts[0])) {
		*error = xasprintf("wildcards are not supported in the binary of a %s probe ('%s')",
				   kind, spec->parts[0]);
		return -EINVAL;
	}
	err = resolve_target(kind, spec->parts[0], &path, error);
	if (err)
		return err;
	err = elf_object_open(path, &object, error);
	if (err) {
		free(path);
		return err;
	}
	function = function_part(spec);
	err = expand_in_object(provider, object, path, function, out, error);
	free(function);
	elf_object_close(object);
	free(path);
	return err;
}

static int uprobe_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return uprobe_expand_common(&uprobe_provider, spec, out, error);
}

static int uretprobe_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return uprobe_expand_common(&uretprobe_provider, spec, out, error);
}

/* Everything was worked out by expand; only the features need restating
 * for points that were copied or built elsewhere. */
static int uprobe_describe(struct probe_point *point, char **error)
{
	if (!point->arg_locations)
		set_calling_convention(point, point->provider == &uretprobe_provider);
	return 0;
}

/* ---- attaching ---- */

/* Opens the perf event (pid's only, or every process) and runs prog_fd on it.
 * A uprobe perf event for every task sits on one CPU but fires on all: the
 * program hangs off the probe, not the CPU's event. */
static int open_and_attach(struct perf_event_attr *attr, pid_t pid, int prog_fd, int fds[2],
			   const char **step)
{
	return perf_event_attach_task(attr, pid > 0 ? pid : -1, pid > 0 ? -1 : 0, prog_fd, 0, fds,
				      step);
}

int probe_attach_uprobe(const struct probe_point *point, bool retprobe, int prog_fd,
			fd_list *fds, char **error)
{
	struct perf_event_attr attr = { 0 };
	int type = pmu_type("uprobe");
	const char *step = "";
	int fd_pair[2] = { -1, -1 }, err;

	if (type < 0) {
		*error = xasprintf("cannot attach %s: this kernel has no uprobe perf events "
				   "(/sys/bus/event_source/devices/uprobe is missing)", point->name);
		return -EOPNOTSUPP;
	}
	attr.size = sizeof(attr);
	attr.type = (uint32_t)type;
	if (retprobe) {
		int bit = pmu_format_bit("uprobe", "retprobe");
		if (bit < 0 || bit > 63) {
			*error = xasprintf("cannot attach %s: this kernel has no uprobe return probes",
					   point->name);
			return -EOPNOTSUPP;
		}
		attr.config |= 1ULL << bit;
	}
	if (point->semaphore_offset) {
		int shift = pmu_format_bit("uprobe", "ref_ctr_offset");
		if (shift < 0 || shift > 63) {
			*error = xasprintf("cannot attach %s: its semaphore needs a kernel with uprobe "
					   "reference counters (Linux 4.20 or later)", point->name);
			return -EOPNOTSUPP;
		}
		attr.config |= point->semaphore_offset << shift;
	}
	attr.config1 = (uint64_t)(uintptr_t)point->binary_path;
	attr.config2 = point->binary_offset;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	err = open_and_attach(&attr, point->pid, prog_fd, fd_pair, &step);
	if (err) {
		if (err == -ESRCH)
			*error = xasprintf("cannot attach %s: there is no process %d", point->name,
					   (int)point->pid);
		else
			*error = xasprintf("cannot attach %s (%s offset 0x%" PRIx64 "): %s failed: %s",
					   point->name, point->binary_path, point->binary_offset,
					   step, strerror(-err));
		return err;
	}
	vec_push(fds, fd_pair[0]);
	if (fd_pair[1] >= 0)
		vec_push(fds, fd_pair[1]);
	return 0;
}

static int uprobe_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			 char **error)
{
	if (point->group)
		return uprobe_multi_attach(point, prog_fd, fds, error);
	return probe_attach_uprobe(point, point->provider == &uretprobe_provider, prog_fd, fds,
				   error);
}

/* ---- listing ---- */

/*
 * -l 'uprobe:BINARY:PATTERN' (or just 'uprobe:BINARY'): the functions of
 * one binary. Without a binary there is nothing to enumerate, so a bare or
 * provider-less pattern lists nothing, as in bpftrace.
 */
static int list_common(const struct provider *provider, const char *pattern, FILE *out,
		       char **error)
{
	size_t prefix = strlen(provider->name);
	const char *rest, *colon;
	char *binary, *path = NULL;
	const char *function;
	struct elf_object *object;
	elf_symbol_list functions = { 0 };
	int err;

	if (!pattern || strncmp(pattern, provider->name, prefix) != 0 || pattern[prefix] != ':')
		return 0;
	rest = pattern + prefix + 1;
	colon = strchr(rest, ':');
	binary = colon ? xstrndup(rest, (size_t)(colon - rest)) : xstrdup(rest);
	function = colon && colon[1] ? colon + 1 : "*";
	err = resolve_target(provider->name, binary, &path, error);
	if (!err)
		err = elf_object_open(path, &object, error);
	if (err) {
		free(binary);
		free(path);
		return err;
	}
	elf_object_functions(object, &functions);
	for (int i = 0; i < functions.count; i++) {
		if (wildcard_match(function, functions.items[i].name))
			fprintf(out, "%s:%s:%s\n", provider->name, path, functions.items[i].name);
	}
	elf_symbol_list_free(&functions);
	elf_object_close(object);
	free(binary);
	free(path);
	return 0;
}

static int uprobe_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return list_common(&uprobe_provider, pattern, out, error);
}

static int uretprobe_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return list_common(&uretprobe_provider, pattern, out, error);
}

const struct provider uprobe_provider = {
	.skip_missing = true,
	.name = "uprobe",
	.user_space = true,
	.runs_last_attached_first = true,
	.aliases = { "u", NULL },
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.expand = uprobe_expand,
	.describe = uprobe_describe,
	.attach = uprobe_attach,
	.list = uprobe_list,
	.prepare_load = uprobe_multi_prepare_load,
};

const struct provider uretprobe_provider = {
	.skip_missing = true,
	.name = "uretprobe",
	.user_space = true,
	.runs_last_attached_first = true,
	.aliases = { "ur", NULL },
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.expand = uretprobe_expand,
	.describe = uprobe_describe,
	.attach = uprobe_attach,
	.list = uretprobe_list,
	.prepare_load = uprobe_multi_prepare_load,
};
