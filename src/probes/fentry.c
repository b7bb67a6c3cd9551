/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fentry:FUNCTION, fentry:MODULE:FUNCTION and fexit:... — BPF trampolines
 * on kernel function entry and return (BPF_PROG_TYPE_TRACING, 5.5+).
 *
 * The program is verified against the function's BTF prototype: it is
 * loaded with expected_attach_type BPF_TRACE_FENTRY/FEXIT and the BTF id of
 * the function (and, for a module function, the fd of the module's BTF
 * object), which prepare_load hands to the loader. Its context is an array
 * of u64, one slot per parameter (two for a struct passed by value in two
 * registers), so `args` is a record of the parameters at those slots, argN
 * is slot N, and an fexit program finds the return value in the slot after
 * the last parameter.
 *
 * Wildcards match the functions that both have BTF and are traceable
 * (available_filter_functions); when that file cannot be read, BTF alone.
 * Attaching is a bpf_link of type BPF_TRACE_FENTRY/FEXIT (or, before 5.10's
 * tracing links, BPF_RAW_TRACEPOINT_OPEN with no name).
 *
 * Where the kernel cannot run fentry programs but has kprobes, fentry is
 * traced with kprobes and fexit with kretprobes (without typed `args`).
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/btf.h"
#include "../kernel/features.h"

extern const struct provider fentry_provider;
extern const struct provider fexit_provider;

/* "MODULE:FUNCTION" for module functions, "FUNCTION" for vmlinux ones: the
 * spelling btf.c takes. */
static char *qualified_name(const struct probe_point *point)
{
	return point->target ? xasprintf("%s:%s", point->target, point->function)
			     : xstrdup(point->function);
}

static struct probe_point *new_point(const struct probe_spec *spec, bool is_return,
				     const char *module, bool module_written, const char *function)
{
	char *name = module_written
		     ? xasprintf("%s:%s:%s", function_family_provider_name(spec), function_family_module(module), function)
		     : xasprintf("%s:%s", function_family_provider_name(spec), function);
	struct probe_point *point =
		probe_point_new(is_return ? &fexit_provider : &fentry_provider, name);

	free(name);
	point->target = module ? xstrdup(module) : NULL;
	point->function = xstrdup(function);
	point->args_access = ARGS_U64_ARRAY;
	return point;
}

static int compare_names(const void *a, const void *b)
{
	const struct btf_name *x = a, *y = b;
	int order = strcmp(x->name, y->name);

	if (order)
		return order;
	if (!x->module || !y->module)
		return x->module ? 1 : y->module ? -1 : 0;
	return strcmp(x->module, y->module);
}

static int compare_kernel_functions(const void *a, const void *b)
{
	const struct kernel_function *x = a, *y = b;
	int order = strcmp(x->name, y->name);

	if (order)
		return order;
	if (!x->module || !y->module)
		return x->module ? 1 : y->module ? -1 : 0;
	return strcmp(x->module, y->module);
}

/* Functions with BTF that the kernel lets us trace, sorted and unique. */
static int traceable_btf_functions(btf_name_list *out, char **error)
{
	const struct kernel_function *traceable = NULL;
	char *reason = NULL;
	int traceable_count = 0, kept = 0;

	if (!btf_available()) {
		*error = xstrdup("fentry needs kernel BTF, and /sys/kernel/btf/vmlinux cannot be read");
		return -ENOENT;
	}
	btf_list_names(BTF_KIND_FUNC, "", true, out);
	if (kernel_functions(&traceable, &traceable_count, &reason) < 0) {
		free(reason);
		traceable = NULL;
	}
	qsort(out->items, (size_t)out->count, sizeof(*out->items), compare_names);
	for (int i = 0; i < out->count; i++) {
		struct btf_name *entry = &out->items[i];
		struct kernel_function key = { entry->module, entry->name };
		bool duplicate = kept && compare_names(&out->items[kept - 1], entry) == 0;
		if (duplicate || (traceable && !bsearch(&key, traceable, (size_t)traceable_count,
							sizeof(*traceable),
							compare_kernel_functions))) {
			free(entry->module);
			free(entry->name);
			continue;
		}
		out->items[kept++] = *entry;
	}
	out->count = kept;
	return 0;
}

int fentry_expand_points(const struct probe_spec *spec, bool is_return, probe_point_list *out,
			 char **error)
{
	const char *kind = function_family_provider_name(spec);
	const char *written_module = spec->part_count == 2 ? spec->parts[0] : NULL;
	const char *function = spec->part_count >= 1 ? spec->parts[spec->part_count - 1] : "";
	int before = out->count, err;

	if (spec->part_count < 1 || spec->part_count > 2 || !function[0] ||
	    (written_module && !written_module[0])) {
		*error = xasprintf("%s probes are written %s:FUNCTION or %s:MODULE:FUNCTION "
				   "(e.g. %s:vfs_read)", kind, kind, kind, kind);
		return -EINVAL;
	}
	if (!has_wildcard(function) && !(written_module && has_wildcard(written_module))) {
		const char *module = written_module && strcmp(written_module, "vmlinux") != 0
				     ? written_module : NULL;
		char *qualified = module ? xasprintf("%s:%s", module, function) : xstrdup(function);
		int btf_id, btf_fd;
		err = btf_available() ? btf_function_id(qualified, &btf_id, &btf_fd) : -ENOENT;
		free(qualified);
		if (err) {
			*error = btf_available()
				 ? xasprintf("kernel function %s%s%s has no BTF type information "
					     "(it may not exist, or be inlined)",
					     module ? module : "", module ? ":" : "", function)
				 : xstrdup("fentry needs kernel BTF, and /sys/kernel/btf/vmlinux "
					   "cannot be read");
			return btf_available() ? -ESRCH : -ENOENT;
		}
		vec_push(out, new_point(spec, is_return, module, written_module != NULL, function));
		return 0;
	}

	btf_name_list names = { 0 };
	err = traceable_btf_functions(&names, error);
	if (err)
		return err;
	for (int i = 0; i < names.count; i++) {
		const struct btf_name *entry = &names.items[i];
		if (!wildcard_match(function, entry->name))
			continue;
		if (written_module && !wildcard_match(written_module, function_family_module(entry->module)))
			continue;
		vec_push(out, new_point(spec, is_return, entry->module, written_module != NULL,
					entry->name));
	}
	btf_name_list_free(&names);
	if (out->count == before) {
		*error = xasprintf("no traceable kernel function with BTF matches %s",
				   spec->text + strlen(spec->provider_name) + 1);
		return -ESRCH;
	}
	return 0;
}

/* Standing in for a kprobe: fentry attaches at a function's entry only. */
static const char *fentry_refuses(const struct probe_spec *spec)
{
	if (spec->part_count >= 1 && strchr(spec->parts[spec->part_count - 1], '+'))
		return "cannot trace an offset inside a function";
	return NULL;
}

const struct function_family fentry_family = {
	.feature = FEATURE_FENTRY,
	.kinds = { "fentry", "fexit" },
	.verb = "is",
	.standing_names = { "fentry", "fexit" },
	.traced_with = { "fentry", "fexit" },
	.traced_detail = { "", "" },
	.expand_points = fentry_expand_points,
	.refuses = fentry_refuses,
};

static int fentry_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return function_family_expand(&fentry_family, &kprobe_family, spec, false, out, error);
}

static int fexit_expand(const struct probe_spec *spec, probe_point_list *out, char **error)
{
	return function_family_expand(&fentry_family, &kprobe_family, spec, true, out, error);
}

static int describe(struct probe_point *point, bool is_return, char **error)
{
	struct type *record = NULL, *return_type = NULL;
	char *qualified = qualified_name(point);
	int err = btf_function_args(qualified, &record, &return_type);

	if (err) {
		*error = xasprintf("cannot describe %s: kernel function %s has no BTF type "
				   "information", point->name, qualified);
		free(qualified);
		return err;
	}
	free(qualified);
	point->args_access = ARGS_U64_ARRAY;
	point->args_type = record;
	point->features = PROBE_HAS_ARGS | PROBE_HAS_ARGN | PROBE_HAS_FUNC;
	/* Slots, not parameters: what argN may index. */
	point->arg_count = record->size / 8;
	if (is_return && return_type) {
		/* The return value follows the arguments in the context. */
		bool is_int = return_type->kind == TYPE_INT;
		point->features |= PROBE_HAS_RETVAL;
		point->retval_location = (struct arg_location){
			.kind = ARG_LOCATION_REGISTER,
			.register_offset = record->size,
			.index_offset = -1,
			.size = is_int ? return_type->size : 8,
			.is_signed = is_int && return_type->is_signed,
		};
	}
	return 0;
}

static int fentry_describe(struct probe_point *point, char **error)
{
	return describe(point, false, error);
}

static int fexit_describe(struct probe_point *point, char **error)
{
	return describe(point, true, error);
}

static int prepare_load(const struct probe_point *point, bool is_return,
			uint32_t *expected_attach_type, uint32_t *attach_btf_id,
			int *attach_btf_obj_fd, char **error)
{
	char *qualified = qualified_name(point);
	int btf_id = 0, btf_fd = 0;
	int err = btf_function_id(qualified, &btf_id, &btf_fd);

	if (err) {
		*error = xasprintf("cannot load %s: no BTF id for kernel function %s: %s",
				   point->name, qualified, strerror(-err));
		free(qualified);
		return err;
	}
	free(qualified);
	*expected_attach_type = is_return ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY;
	*attach_btf_id = (uint32_t)btf_id;
	*attach_btf_obj_fd = btf_fd;
	return 0;
}

static int fentry_prepare_load(const struct probe_point *point, uint32_t *expected_attach_type,
			       uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error)
{
	return prepare_load(point, false, expected_attach_type, attach_btf_id, attach_btf_obj_fd,
			    error);
}

static int fexit_prepare_load(const struct probe_point *point, uint32_t *expected_attach_type,
			      uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error)
{
	return prepare_load(point, true, expected_attach_type, attach_btf_id, attach_btf_obj_fd,
			    error);
}

static int attach(const struct probe_point *point, bool is_return, int prog_fd, fd_list *fds,
		  char **error)
{
	int fd = bpf_link_create(prog_fd, 0, is_return ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY, NULL);
	int err;

	if (fd < 0 && (errno == EINVAL || errno == EOPNOTSUPP))
		/* Kernels before tracing links: the raw tracepoint open of a
		 * tracing program attaches it to its BTF target. */
		fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	if (fd < 0) {
		err = -errno;
		*error = xasprintf("cannot attach %s: %s link failed: %s", point->name,
				   is_return ? "fexit" : "fentry", strerror(-err));
		return err;
	}
	vec_push(fds, fd);
	return 0;
}

static int fentry_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			 char **error)
{
	return attach(point, false, prog_fd, fds, error);
}

static int fexit_attach(const struct probe_point *point, int prog_fd, fd_list *fds,
			char **error)
{
	return attach(point, true, prog_fd, fds, error);
}

/* "fentry:vfs_read", "fentry:ext4:ext4_file_open"; verbose adds the
 * parameters and, for fexit, the return type. */
static int list_functions(const char *kind, bool is_return, const char *pattern, bool verbose,
			  FILE *out)
{
	btf_name_list names = { 0 };
	char *error = NULL;

	if (traceable_btf_functions(&names, &error) < 0) {
		free(error);
		return 0;
	}
	for (int i = 0; i < names.count; i++) {
		const struct btf_name *entry = &names.items[i];
		char *name = entry->module ? xasprintf("%s:%s:%s", kind, entry->module, entry->name)
					   : xasprintf("%s:%s", kind, entry->name);
		char *qualified = xasprintf("%s:%s:%s", kind, function_family_module(entry->module), entry->name);
		if (!pattern || wildcard_match(pattern, name) || wildcard_match(pattern, qualified)) {
			fprintf(out, "%s\n", name);
			btf_decl_list decls = { 0 };
			char *function = entry->module ? xasprintf("%s:%s", entry->module, entry->name)
						       : xstrdup(entry->name);
			if (verbose && btf_function_declarations(function, &decls) == 0) {
				for (int j = 0; j < decls.count; j++) {
					/* The return type is the last line; fentry has none. */
					bool is_retval = strstr(decls.items[j], "retval") &&
							 j == decls.count - 1;
					if (!is_retval || is_return)
						fprintf(out, "    %s\n", decls.items[j]);
				}
			}
			btf_decl_list_free(&decls);
			free(function);
		}
		free(qualified);
		free(name);
	}
	btf_name_list_free(&names);
	return 0;
}

static int fentry_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	return list_functions("fentry", false, pattern, verbose, out);
}

/* Listed only when asked for by name, like kretprobes. */
static int fexit_list(const char *pattern, bool verbose, FILE *out, char **error)
{
	if (!pattern || strncmp(pattern, "fexit:", 6) != 0)
		return 0;
	return list_functions("fexit", true, pattern, verbose, out);
}

const struct provider fentry_provider = {
	.skip_missing = true,
	.name = "fentry",
	.aliases = { "kfunc", "f", NULL },
	.prog_type = BPF_PROG_TYPE_TRACING,
	.expand = fentry_expand,
	.describe = fentry_describe,
	.attach = fentry_attach,
	.list = fentry_list,
	.prepare_load = fentry_prepare_load,
};

const struct provider fexit_provider = {
	.skip_missing = true,
	.name = "fexit",
	.aliases = { "kretfunc", "fr", NULL },
	.prog_type = BPF_PROG_TYPE_TRACING,
	.expand = fexit_expand,
	.describe = fexit_describe,
	.attach = fexit_attach,
	.list = fexit_list,
	.prepare_load = fexit_prepare_load,
};
