/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kprobe:FUNCTION[+OFFSET], kprobe:MODULE:FUNCTION and kretprobe:... — a
 * breakpoint on (or the return from) any kernel function.
 *
 * A kprobe program (BPF_PROG_TYPE_KPROBE) receives the struct pt_regs of the
 * interrupted code, so on x86-64 arg0..arg5 are the argument registers of
 * the calling convention (di, si, dx, cx, r8, r9) and retval is ax at a
 * return probe.
 *
 * Wildcards are matched against tracefs's available_filter_functions, the
 * functions the kernel is willing to trace ("name" or "name [module]").
 *
 * Attaching goes through the kprobe PMU: perf_event_open with the PMU's
 * dynamic type, the symbol name in config1, the offset in config2 and the
 * PMU's "retprobe" format bit for kretprobes; the program then hangs off that
 * perf event by a bpf_link (or the older ioctl). A wildcard with very many
 * matches would need one program and two fds per function; there, when the
 * kernel has kprobe_multi links (5.18), one program is attached to every
 * function at once through a single BPF_TRACE_KPROBE_MULTI link. Such a
 * program does not know statically which function it is in, so `func` is
 * not offered for those points.
 *
 * When the kernel has no kprobes but can run fentry programs, kprobes are
 * traced by fentry and kretprobes by fexit (and fentry.c does the reverse).
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/btf.h"
#include "../kernel/features.h"
#include "../kernel/kallsyms.h"
#include "../kernel/pmu.h"
#include "../kernel/tracefs.h"

extern const struct provider kprobe_provider;
extern const struct provider kretprobe_provider;

/* From this many matches on, a wildcard is attached with one kprobe_multi
 * link rather than one program per function: below it the per-function
 * programs (which can name `func`) are cheap enough; above it they would
 * approach the usual limit of 1024 open files. */
#define KPROBE_MULTI_MIN_FUNCTIONS 256


/* ---- the kernel's traceable functions ---- */

static struct kernel_function *function_table;
static int function_table_count;
static int function_table_error; /* -errno once reading failed */
static char *function_table_message;

static int compare_functions(const void *a, const void *b)
{
	const struct kernel_function *x = a, *y = b;
	int order = strcmp(x->name, y->name);

	if (order)
		return order;
	if (!x->module || !y->module)
		return x->module ? 1 : y->module ? -1 : 0;
	return strcmp(x->module, y->module);
}

static int read_function_table(void)
{
	VEC(struct kernel_function) list = { 0 };
	const char *root;
	char *path, *text, *line, *next;
	int err = tracefs_require(&root, &function_table_message);

	if (err)
		return err;
	path = xasprintf("%s/available_filter_functions", root);
	text = read_file(path, NULL);
	if (!text) {
		err = -errno;
		function_table_message = xasprintf("reading %s failed: %s", path, strerror(errno));
		free(path);
		return err;
	}
	free(path);
	for (line = text; *line; line = next) {
		char *end = strchr(line, '\n');
		next = end ? end + 1 : line + strlen(line);
		if (end)
			*end = '\0';
		/* "name" or "name [module]" */
		char *space = strchr(line, ' ');
		struct kernel_function function = { 0 };
		if (space) {
			char *open = strchr(space, '['), *close = strchr(space, ']');
			*space = '\0';
			if (open && close && close > open)
				function.module = xstrndup(open + 1, (size_t)(close - open - 1));
		}
		if (!line[0]) {
			free(function.module);
			continue;
		}
		function.name = xstrdup(line);
		vec_push(&list, function);
	}
	free(text);
	qsort(list.items, (size_t)list.count, sizeof(*list.items), compare_functions);
	int kept = 0;
	for (int i = 0; i < list.count; i++) {
		if (kept && compare_functions(&list.items[kept - 1], &list.items[i]) == 0) {
			free(list.items[i].name);
			free(list.items[i].module);
			continue;
		}
		list.items[kept++] = list.items[i];
	}
	function_table = list.items;
	function_table_count = kept;
	return 0;
}

int kernel_functions(const struct kernel_function **functions, int *count, char **error)
{
	if (!function_table && !function_table_error) {
		int err = read_function_table();
		if (err)
			function_table_error = err;
	}
	if (function_table_error) {
		*error = xstrdup(function_table_message ? function_table_message
							: "cannot read the traceable functions");
		return function_table_error;
	}
	*functions = function_table;
	*count = function_table_count;
	return 0;
}

/* ---- expansion ---- */

/* Splits FUNCTION[+OFFSET] in place; false when the offset is malformed. */
static bool split_offset(char *function, uint64_t *offset)
{
	char *plus = strchr(function, '+');
	char *end;

	*offset = 0;
	if (!plus)
		return true;
	*plus = '\0';
	if (!plus[1])
		return false;
	*offset = strtoull(plus + 1, &end, 0);
	return *end == '\0';
}

static struct probe_point *new_point(const struct probe_spec *spec, bool is_return,
				     const char *module, const char *written_module,
				     const char *function, uint64_t offset)
{
	struct strbuf name;
	struct probe_point *point;

	strbuf_init(&name);
	strbuf_printf(&name, "%s:", function_family_provider_name(spec));
	if (written_module)
		strbuf_printf(&name, "%s:", function_family_module(module));
	strbuf_puts(&name, function);
	if (offset)
		strbuf_printf(&name, "+%llu", (unsigned long long)offset);
	point = probe_point_new(is_return ? &kretprobe_provider : &kprobe_provider, name.data);
	strbuf_free(&name);
	point->target = module ? xstrdup(module) : NULL;
	point->function = xstrdup(function);
	point->binary_offset = offset; /* the offset into the function, for kprobes */
	point->args_access = ARGS_PT_REGS;
	return point;
}

static bool function_is_listed(const char *module, const char *function)
{
	const struct kernel_function *functions;
	char *error = NULL;
	int count;

	if (kernel_functions(&functions, &count, &error) < 0) {
		free(error);
		return false;
	}
	struct kernel_function key = { (char *)module, (char *)function };
	if (bsearch(&key, functions, (size_t)count, sizeof(*functions), compare_functions))
		return true;
	/* Written without a module: any module's function of that name. */
	for (int i = 0; !module && i < count; i++) {
		if (strcmp(functions[i].name, function) == 0)
			return true;
	}
	return false;
}

int kprobe_expand_points(const struct probe_spec *spec, bool is_return, probe_point_list *out,
			 char **error)
{
	const char *kind = function_family_provider_name(spec);
	const char *written_module = spec->part_count == 2 ? spec->parts[0] : NULL;
	char *function;
	uint64_t offset = 0;
	int err = 0;

	if (spec->part_count < 1 || spec->part_count > 2 || !spec->parts[spec->part_count - 1][0] ||
	    (written_module && !written_module[0])) {
		*error = xasprintf("%s probes are written %s:FUNCTION or %s:MODULE:FUNCTION "
				   "(e.g. %s:vfs_read)", kind, kind, kind, kind);
		return -EINVAL;
	}
	function = xstrdup(spec->parts[spec->part_count - 1]);
	if (!split_offset(function, &offset)) {
		*error = xasprintf("'%s' is not a valid FUNCTION+OFFSET", spec->parts[spec->part_count - 1]);
		free(function);
		return -EINVAL;
	}
	if (offset && (is_return || has_wildcard(function))) {
		*error = xasprintf("an offset (+%llu) needs a single function and a kprobe, "
				   "not a kretprobe or a wildcard", (unsigned long long)offset);
		free(function);
		return -EINVAL;
	}
	const char *module = written_module && strcmp(written_module, "vmlinux") != 0
			     ? written_module : NULL;

	if (!has_wildcard(function) && !(written_module && has_wildcard(written_module))) {
		unsigned long long address;
		/* Anything in kallsyms that is not blacklisted can be probed,
		 * so an unlisted function is only an error when kallsyms does
		 * not know it either. */
		if (!function_is_listed(module, function) &&
		    kallsyms_lookup(function, &address) == -ENOENT) {
			*error = xasprintf("kernel function not found: %s", function);
			free(function);
			return -ESRCH;
		}
		vec_push(out, new_point(spec, is_return, module, written_module, function, offset));
		free(function);
		return 0;
	}

	const struct kernel_function *functions;
	int count;
	char *reason = NULL;
	err = kernel_functions(&functions, &count, &reason);
	if (err) {
		*error = xasprintf("cannot expand the wildcard in %s: %s", spec->text, reason);
		free(reason);
		free(function);
		return err;
	}
	VEC(const struct kernel_function *) matches = { 0 };
	for (int i = 0; i < count; i++) {
		if (!wildcard_match(function, functions[i].name))
			continue;
		if (written_module && !wildcard_match(written_module, function_family_module(functions[i].module)))
			continue;
		vec_push(&matches, &functions[i]);
	}
	if (matches.count == 0) {
		*error = xasprintf("no kernel function matches %s",
				   spec->text + strlen(spec->provider_name) + 1);
		err = -ESRCH;
	} else if (matches.count >= KPROBE_MULTI_MIN_FUNCTIONS &&
		   feature_available(FEATURE_KPROBE_MULTI)) {
		char *name = xasprintf("%s:%s", kind, spec->text + strlen(spec->provider_name) + 1);
		struct probe_point *point =
			probe_point_new(is_return ? &kretprobe_provider : &kprobe_provider, name);
		free(name);
		point->functions = xcalloc((size_t)matches.count, sizeof(*point->functions));
		for (int i = 0; i < matches.count; i++) {
			/* The same name in two modules is one kallsyms name. */
			if (point->function_count && strcmp(point->functions[point->function_count - 1],
							    matches.items[i]->name) == 0)
				continue;
			point->functions[point->function_count++] = xstrdup(matches.items[i]->name);
		}
		point->args_access = ARGS_PT_REGS;
		vec_push(out, point);
	} else {
		for (int i = 0; i < matches.count; i++)
			vec_push(out, new_point(spec, is_return, matches.items[i]->module,
						written_module, matches.items[i]->name, 0));
	}
	free(matches.items);
	free(function);
	return err;
}

const struct function_family kprobe_family = {
	.feature = FEATURE_KPROBE,
	.kinds = { "kprobes", "kretprobes" },
	.verb = "are",
	.standing_names = { "kprobes", "kprobes" },
	.traced_with = { "a kprobe", "a kretprobe" },
	.traced_detail = { " (arg0..arg5, no typed args)",
			   " (arg0..arg5 are not available, retval is, no typed args)" },
	.expand_points = kprobe_expand_points,
};

static int kprobe_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return function_family_expand(&kprobe_family, &fentry_family, spec, false, out, error);
}

static int kretprobe_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return function_family_expand(&kprobe_family, &fentry_family, spec, true, out, error);
}

static int describe(struct probe_point *point, bool is_return, char **error)
{
	point->args_access = ARGS_PT_REGS;
	point->features = point->function ? PROBE_HAS_FUNC : 0;
	if (is_return) {
		point->features |= PROBE_HAS_RETVAL;
		point->retval_location = (struct arg_location){
			.kind = ARG_LOCATION_REGISTER,
			.register_offset = ARCH_RETURN_VALUE,
			.size = 8,
			.is_signed = true,
		};
		return 0;
	}
	point->features |= PROBE_HAS_ARGN;
	point->arg_count = ARCH_ARGUMENT_REGISTERS;
	free(point->arg_locations);
	point->arg_locations = xcalloc(ARCH_ARGUMENT_REGISTERS, sizeof(*point->arg_locations));
	for (int i = 0; i < ARCH_ARGUMENT_REGISTERS; i++)
		point->arg_locations[i] = (struct arg_location){
			.kind = ARG_LOCATION_REGISTER,
			.register_offset = arch_call_arguments[i],
			.index_offset = -1,
			.size = 8,
		};
	return 0;
}

static int kprobe_describe(struct probe_point *point, char **error)
{
	return describe(point, false, error);
}

static int kretprobe_describe(struct probe_point *point, char **error)
{
	return describe(point, true, error);
}

static int kprobe_prepare_load(const struct probe_point *point, uint32_t *expected_attach_type,
			       uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error)
{
	if (point->function_count)
		*expected_attach_type = BPF_TRACE_KPROBE_MULTI;
	return 0;
}

/* ---- attaching ---- */

static int attach_multi(const struct probe_point *point, bool is_return, int prog_fd,
			fd_list *fds, char **error)
{
	LIBBPF_OPTS(bpf_link_create_opts, options);
	int fd;

	options.kprobe_multi.syms = (const char **)point->functions;
	options.kprobe_multi.cnt = (uint32_t)point->function_count;
	options.kprobe_multi.flags = is_return ? BPF_F_KPROBE_MULTI_RETURN : 0;
	fd = bpf_link_create(prog_fd, 0, BPF_TRACE_KPROBE_MULTI, &options);
	if (fd < 0) {
		int err = -errno;
		*error = xasprintf("cannot attach %s to its %d functions: kprobe_multi link "
				   "failed: %s", point->name, point->function_count, strerror(-err));
		return err;
	}
	vec_push(fds, fd);
	return 0;
}

static int attach(const struct probe_point *point, bool is_return, int prog_fd, fd_list *fds,
		  char **error)
{
	struct perf_event_attr attr = { 0 };
	int type, bit = 0, err;

	if (point->function_count)
		return attach_multi(point, is_return, prog_fd, fds, error);
	type = pmu_type("kprobe");
	if (type < 0) {
		*error = xasprintf("cannot attach %s: the kernel has no kprobe PMU (%s); it was "
				   "probably built without CONFIG_KPROBES",
				   point->name, strerror(-type));
		return type;
	}
	if (is_return) {
		bit = pmu_format_bit("kprobe", "retprobe");
		if (bit < 0) {
			*error = xasprintf("cannot attach %s: the kprobe PMU has no retprobe "
					   "format bit", point->name);
			return bit;
		}
		attr.config |= 1ULL << bit;
	}
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)point->function;
	attr.config2 = point->binary_offset;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	err = probe_attach_perf_event(point, &attr, prog_fd, fds, error);
	if (err == -EILSEQ && point->binary_offset) {
		free(*error);
		*error = xasprintf("cannot attach %s: +%llu is not the start of an instruction "
				   "in %s that can be probed", point->name,
				   (unsigned long long)point->binary_offset, point->function);
	} else if (err == -ENOENT || err == -EINVAL) {
		char *cause = *error;
		*error = xasprintf("%s (is %s a kernel function that can be probed%s?)", cause,
				   point->function,
				   point->binary_offset ? ", and the offset an instruction boundary" : "");
		free(cause);
	}
	return err;
}

static int kprobe_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			 char **error)
{
	return attach(point, false, prog_fd, fds, error);
}

static int kretprobe_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			    char **error)
{
	return attach(point, true, prog_fd, fds, error);
}

/* ---- listing ---- */

static int list_functions(const char *kind, const char *pattern, FILE *out)
{
	const struct kernel_function *functions;
	char *error = NULL;
	int count;

	if (kernel_functions(&functions, &count, &error) < 0) {
		/* Unreadable (lockdown, no tracefs): nothing to list. */
		free(error);
		return 0;
	}
	for (int i = 0; i < count; i++) {
		char *name = xasprintf("%s:%s", kind, functions[i].name);
		char *qualified = xasprintf("%s:%s:%s", kind, function_family_module(functions[i].module),
					    functions[i].name);
		if (!pattern || wildcard_match(pattern, name) || wildcard_match(pattern, qualified))
			fprintf(out, "%s\n", name);
		free(qualified);
		free(name);
	}
	return 0;
}

/* Patterns come canonical ("kprobe:vfs_*") when a provider was named, raw
 * when -l searches every provider. */
static int kprobe_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return list_functions("kprobe", pattern, out);
}

/* Return probes exist for every kprobe; they are listed only when asked for
 * by name, as bpftrace does. */
static int kretprobe_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	if (!pattern || strncmp(pattern, "kretprobe:", 10) != 0)
		return 0;
	return list_functions("kretprobe", pattern, out);
}

const struct provider kprobe_provider = {
	.skip_missing = true,
	.name = "kprobe",
	.aliases = { "k", NULL },
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.expand = kprobe_expand,
	.describe = kprobe_describe,
	.attach = kprobe_attach,
	.list = kprobe_list,
	.prepare_load = kprobe_prepare_load,
};

const struct provider kretprobe_provider = {
	.skip_missing = true,
	.name = "kretprobe",
	.aliases = { "kr", NULL },
	.prog_type = BPF_PROG_TYPE_KPROBE,
	.expand = kretprobe_expand,
	.describe = kretprobe_describe,
	.attach = kretprobe_attach,
	.list = kretprobe_list,
	.prepare_load = kprobe_prepare_load,
};
