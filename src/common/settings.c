/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The settings table: sonde's variables, bpftrace's names for them, and
 * what a config block's keys mean. A value is checked where sonde's own
 * variable is read (main.c, runtime/load.c); only the spellings that differ
 * (a page count for a byte size, true/false) are converted here.
 */
#include "common/settings.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/util.h"

static const struct setting settings_table[] = {
	{ "max_strlen", SETTING_MAX_STRLEN, "SONDE_MAX_STRLEN",
	  { "BPFTRACE_MAX_STRLEN", "BPFTRACE_STRLEN" }, NULL },
	{ "max_map_keys", SETTING_MAX_MAP_KEYS, "SONDE_MAX_MAP_ENTRIES",
	  { "BPFTRACE_MAX_MAP_KEYS", "BPFTRACE_MAP_KEYS_MAX" }, NULL },
	{ "perf_rb_pages", SETTING_PERF_RB_PAGES, "SONDE_RINGBUF_SIZE",
	  { "BPFTRACE_PERF_RB_PAGES" }, NULL },
	{ "print_maps_on_exit", SETTING_PRINT_MAPS_ON_EXIT, "SONDE_PRINT_MAPS_ON_EXIT",
	  { "BPFTRACE_PRINT_MAPS_ON_EXIT" }, NULL },
	{ "stack_mode", SETTING_STACK_MODE, "SONDE_STACK_MODE",
	  { "BPFTRACE_STACK_MODE" }, NULL },
	{ "max_cat_bytes", SETTING_MAX_CAT_BYTES, "SONDE_MAX_CAT_BYTES",
	  { "BPFTRACE_MAX_CAT_BYTES", "BPFTRACE_CAT_BYTES_MAX" }, NULL },
	{ "missing_probes", SETTING_MISSING_PROBES, "SONDE_MISSING_PROBES",
	  { "BPFTRACE_MISSING_PROBES" }, NULL },
	{ "max_probes", SETTING_UNUSED, NULL, { "BPFTRACE_MAX_PROBES" },
	  "sonde sets no limit on attached probes" },
	{ "max_bpf_progs", SETTING_UNUSED, NULL, { "BPFTRACE_MAX_BPF_PROGS" },
	  "sonde sets no limit on programs but the open-file limit" },
	{ "log_size", SETTING_UNUSED, NULL, { "BPFTRACE_LOG_SIZE" },
	  "sonde sizes the verifier log itself" },
	{ "on_stack_limit", SETTING_UNUSED, NULL, { "BPFTRACE_ON_STACK_LIMIT" },
	  "sonde moves values off the BPF stack when they do not fit" },
	{ "cpp_demangle", SETTING_UNUSED, NULL,
	  { "BPFTRACE_CPP_DEMANGLE", "BPFTRACE_NO_CPP_DEMANGLE" },
	  "sonde always demangles C++ and Rust names" },
	{ "lazy_symbolication", SETTING_UNUSED, NULL, { "BPFTRACE_LAZY_SYMBOLICATION" },
	  "sonde reads a process's symbols when it first needs them" },
	{ "cache_user_symbols", SETTING_UNUSED, NULL, { "BPFTRACE_CACHE_USER_SYMBOLS" },
	  "sonde caches user symbols per process" },
	{ "symbol_source", SETTING_UNUSED, NULL, { "BPFTRACE_SYMBOL_SOURCE" },
	  "sonde takes uprobe locations from the symbol table" },
	{ "show_debug_info", SETTING_UNUSED, NULL, { "BPFTRACE_SHOW_DEBUG_INFO" },
	  "sonde prints no file and line in stacks" },
	{ "max_type_res_iterations", SETTING_UNUSED, NULL,
	  { "BPFTRACE_MAX_TYPE_RES_ITERATIONS" }, "sonde resolves types from BTF without a limit" },
	{ "str_trunc_trailer", SETTING_UNUSED, NULL, { "BPFTRACE_STR_TRUNC_TRAILER" },
	  "sonde marks no truncated string" },
	{ "license", SETTING_UNUSED, NULL, { "BPFTRACE_LICENSE" },
	  "sonde's programs are always GPL" },
	{ "vmlinux", SETTING_UNUSED, NULL, { "BPFTRACE_VMLINUX" },
	  "sonde reads kernel symbols from /proc/kallsyms" },
	{ "btf", SETTING_UNUSED, NULL, { "BPFTRACE_BTF" },
	  "sonde reads BTF from /sys/kernel/btf" },
	{ "kernel_source", SETTING_UNUSED, NULL, { "BPFTRACE_KERNEL_SOURCE" },
	  "sonde reads no kernel headers" },
	{ "kernel_build", SETTING_UNUSED, NULL, { "BPFTRACE_KERNEL_BUILD" },
	  "sonde reads no kernel headers" },
	{ "debug_output", SETTING_UNUSED, NULL, { "BPFTRACE_DEBUG_OUTPUT" },
	  "sonde has no debug output stream; -d prints the program" },
	/* current bpftrace's gates on its unstable features: sonde's versions of
	 * those it has need none, and the others are errors where used */
	{ "unstable_macro", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_MACRO" },
	  "macros need no flag (current bpftrace deprecated it too)" },
	{ "unstable_map_decl", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_MAP_DECL" },
	  "map declarations need no flag" },
	{ "unstable_tseries", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_TSERIES" },
	  "tseries() needs no flag" },
	{ "unstable_import", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_IMPORT" },
	  "sonde has no import statement" },
	{ "unstable_addr", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_ADDR" },
	  "sonde has no address-of operator" },
	{ "unstable_typeinfo", SETTING_UNUSED, NULL, { "BPFTRACE_UNSTABLE_TYPEINFO" },
	  "sonde has no typeinfo()" },
};

#define SETTINGS_COUNT (sizeof(settings_table) / sizeof(settings_table[0]))

const struct setting *setting_find_bpftrace_env(const char *name)
{
	for (size_t i = 0; i < SETTINGS_COUNT; i++) {
		for (const char *const *env = settings_table[i].bpftrace_env; *env; env++) {
			if (strcmp(*env, name) == 0)
				return &settings_table[i];
		}
	}
	return NULL;
}

const struct setting *setting_find(const char *name)
{
	const struct setting *setting = setting_find_bpftrace_env(name);

	if (setting)
		return setting;
	for (size_t i = 0; i < SETTINGS_COUNT; i++) {
		if (strcasecmp(settings_table[i].key, name) == 0)
			return &settings_table[i];
	}
	return NULL;
}

/* A whole decimal number from 1 to limit; -1 if text is not one. */
static long long settings_number(const char *text, long long limit)
{
	char *end;
	long long value;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	value = strtoll(text, &end, 10);
	if (errno || *end || value < 1 || value > limit)
		return -1;
	return value;
}

char *setting_convert(const struct setting *setting, const char *value, char **error)
{
	if (setting->id == SETTING_PERF_RB_PAGES) {
		/* bpftrace's one ring buffer of that many pages; sonde's is
		 * sized in bytes, a power of two */
		long page_size = sysconf(_SC_PAGESIZE);
		long long pages = settings_number(value, 1 << 18);
		unsigned long long bytes = 1;

		if (page_size <= 0)
			page_size = 4096;
		if (pages < 0) {
			*error = xasprintf("perf_rb_pages must be a number of pages from 1 to %d, "
					   "not '%s'", 1 << 18, value);
			return NULL;
		}
		while (bytes < (unsigned long long)pages * (unsigned long long)page_size)
			bytes <<= 1;
		if (bytes > 1ull << 30)
			bytes = 1ull << 30;
		return xasprintf("%llu", bytes);
	}
	if (setting->id == SETTING_PRINT_MAPS_ON_EXIT) {
		if (strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0)
			return xstrdup("1");
		if (strcasecmp(value, "false") == 0 || strcmp(value, "0") == 0)
			return xstrdup("0");
		*error = xasprintf("print_maps_on_exit must be true or false, not '%s'", value);
		return NULL;
	}
	return xstrdup(value);
}
