/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ELF reading (kernel/elf.c) and USDT argument decoding (probes/usdt.c).
 *
 * The object under test is this test program itself (/proc/self/exe): it
 * defines functions and USDT probes with known properties, so symbol
 * addresses, address → file offset and the .note.stapsdt reader can be
 * checked against what the running process really has in memory. The
 * ld.so.cache reader gets synthetic caches built here byte by byte, plus
 * the system's own. Needs no root.
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "kernel/elf.h"
#include "probes/provider.h"

#if __has_include(<sys/sdt.h>)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define HAVE_SDT 1
__extension__ unsigned short test_elf_plain_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));
__extension__ unsigned short test_elf_guarded_semaphore
	__attribute__((unused)) __attribute__((section(".probes")));
#else
#define HAVE_SDT 0
#endif

static int passed, failed;

static void check(bool ok, const char *name, const char *why)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	}
}

/* ---- this program as the object under test ---- */

__attribute__((noinline, used)) long elf_test_known_function(long a, long b)
{
	__asm__ volatile("" ::: "memory");
	return a * 3 + b;
}

long elf_test_global = 5;

/* Where this executable is loaded: run-time address minus link-time address. */
static uintptr_t load_bias(void)
{
	Dl_info info;
	struct link_map *map = NULL;

	if (dladdr1((void *)elf_test_known_function, &info, (void **)&map, RTLD_DL_LINKMAP) &&
	    map)
		return map->l_addr;
	return 0;
}

static void test_symbols(struct elf_object *object)
{
	elf_symbol_list functions = { 0 };
	const struct elf_symbol *found = NULL;
	bool sorted = true, unique = true, no_empty = true;

	elf_object_functions(object, &functions);
	for (int i = 0; i < functions.count; i++) {
		if (strcmp(functions.items[i].name, "elf_test_known_function") == 0)
			found = &functions.items[i];
		if (functions.items[i].size == 0)
			no_empty = false;
		if (i > 0) {
			int order = strcmp(functions.items[i - 1].name, functions.items[i].name);
			sorted &= order <= 0;
			unique &= order != 0;
		}
	}
	check(found != NULL, "symbols: own function listed", "elf_test_known_function missing");
	check(!found || found->address + load_bias() == (uintptr_t)elf_test_known_function,
	      "symbols: address plus load bias is the run-time address", "addresses differ");
	check(!found || found->size > 0, "symbols: function has a size", "size 0");
	check(sorted && unique, "symbols: sorted, each name once", "order or repeats wrong");
	check(no_empty, "symbols: no zero-size functions", "a size-0 symbol was listed");
	bool has_data = false;
	for (int i = 0; i < functions.count; i++)
		has_data |= strcmp(functions.items[i].name, "elf_test_global") == 0;
	check(!has_data, "symbols: data symbols are not functions", "elf_test_global listed");

	struct elf_symbol symbol;
	check(elf_object_find_symbol(object, "elf_test_global", &symbol) == 0 &&
		      symbol.address + load_bias() == (uintptr_t)&elf_test_global,
	      "symbols: find data symbol by name", "elf_test_global not found or wrong address");
	check(elf_object_find_symbol(object, "no_such_symbol_here", &symbol) == -ENOENT,
	      "symbols: missing symbol is -ENOENT", "found something");

	/* The bytes at the file offset must be the function's code in memory. */
	uint64_t offset = 0;
	int err = found ? elf_object_address_to_offset(object, found->address, &offset) : -1;
	char *file = read_file("/proc/self/exe", NULL);
	size_t length = 0;
	free(file);
	file = read_file("/proc/self/exe", &length);
	bool same = err == 0 && file && offset + 16 <= length &&
		    memcmp(file + offset, (const void *)elf_test_known_function, 16) == 0;
	check(same, "address to offset: file bytes equal code in memory",
	      err ? "no segment maps the address" : "bytes differ");
	check(elf_object_address_to_offset(object, 0xffffffff00000000ULL, &offset) == -ENOENT,
	      "address to offset: unmapped address is -ENOENT", "an offset was returned");
	free(file);
	elf_symbol_list_free(&functions);
}

static void test_stapsdt(struct elf_object *object)
{
#if HAVE_SDT
	stapsdt_note_list notes = { 0 };
	const struct stapsdt_note *plain = NULL, *guarded = NULL;
	volatile int a = 7;
	volatile long b = -9;

	/* Probes only exist if reached in the code; a never-true branch is fine. */
	if (a == 1234) {
		STAP_PROBE2(test_elf, plain, a, b);
		if (test_elf_guarded_semaphore)
			STAP_PROBE1(test_elf, guarded, b);
	}
	elf_object_stapsdt_notes(object, &notes);
	for (int i = 0; i < notes.count; i++) {
		if (strcmp(notes.items[i].provider, "test_elf") != 0)
			continue;
		if (strcmp(notes.items[i].name, "plain") == 0)
			plain = &notes.items[i];
		if (strcmp(notes.items[i].name, "guarded") == 0)
			guarded = &notes.items[i];
	}
	check(plain && guarded, "stapsdt: both probes found", "a probe is missing");
	if (!plain || !guarded) {
		stapsdt_note_list_free(&notes);
		return;
	}
	/* With _SDT_HAS_SEMAPHORES every probe of this file has one. */
	check(guarded->semaphore + load_bias() == (uintptr_t)&test_elf_guarded_semaphore,
	      "stapsdt: semaphore address", "wrong semaphore address");
	uint64_t offset;
	size_t length = 0;
	char *file = read_file("/proc/self/exe", &length);
	bool nop = elf_object_address_to_offset(object, plain->pc, &offset) == 0 && file &&
		   offset < length && (unsigned char)file[offset] == 0x90;
	check(nop, "stapsdt: pc is a nop in the file", "no nop at the probe's offset");
	check(*(const unsigned char *)(uintptr_t)(plain->pc + load_bias()) == 0x90,
	      "stapsdt: pc is a nop in memory", "no nop at the probe's address");
	free(file);
	struct arg_location *locations = NULL;
	char *error = NULL;
	int count = usdt_parse_arguments(plain->arguments, plain->pc, NULL, NULL, &locations,
					 &error);
	check(count == 2 && locations[0].size == 4 && locations[0].is_signed &&
		      locations[1].size == 8 && locations[1].is_signed,
	      "stapsdt: arguments decode (int, long)", plain->arguments);
	free(locations);
	free(error);
	stapsdt_note_list_free(&notes);
#else
	/* a skip, not a pass: run_all.py counts SKIP lines as skipped */
	printf("SKIP stapsdt: no sys/sdt.h (systemtap-sdt-dev)\n");
#endif
}

/* ---- argument strings ---- */

static bool lookup_test_symbol(void *context, const char *name, uint64_t *address)
{
	if (strcmp(name, "counter") != 0)
		return false;
	*address = 0x4010;
	return true;
}

#define REG(off, sz, sg) { ARG_LOCATION_REGISTER, off, -1, 1, 0, sz, sg }
#define MEM(base, index, scale, disp, sz, sg) { ARG_LOCATION_MEMORY, base, index, scale, disp, sz, sg }
#define CONST(value, sz, sg) { ARG_LOCATION_CONSTANT, 0, -1, 1, value, sz, sg }

static const struct {
	const char *text;
	int count;                    /* -1: must be rejected */
	struct arg_location expected[3];
} argument_cases[] = {
	{ "", 0, { { 0 } } },
	{ "-4@%edi", 1, { REG(PT_REGS_DI, 4, true) } },
	{ "8@%rax -8@%r12", 2, { REG(PT_REGS_AX, 8, false), REG(PT_REGS_R12, 8, true) } },
	{ "-1@%al -2@%dx -4@%ecx", 3,
	  { REG(PT_REGS_AX, 1, true), REG(PT_REGS_DX, 2, true), REG(PT_REGS_CX, 4, true) } },
	{ "4@%r8d 2@%r9w 1@%r15b", 3,
	  { REG(PT_REGS_R8, 4, false), REG(PT_REGS_R9, 2, false), REG(PT_REGS_R15, 1, false) } },
	{ "1@%sil 1@%dil 8@%rsp", 3,
	  { REG(PT_REGS_SI, 1, false), REG(PT_REGS_DI, 1, false), REG(PT_REGS_SP, 8, false) } },
	{ "8@-8(%rbp)", 1, { MEM(PT_REGS_BP, -1, 1, -8, 8, false) } },
	{ "-4@16(%rsp)", 1, { MEM(PT_REGS_SP, -1, 1, 16, 4, true) } },
	{ "8@(%rax)", 1, { MEM(PT_REGS_AX, -1, 1, 0, 8, false) } },
	{ "8@(%rax,%rdx,8)", 1, { MEM(PT_REGS_AX, PT_REGS_DX, 8, 0, 8, false) } },
	{ "-2@0x10(%rbx,%rcx)", 1, { MEM(PT_REGS_BX, PT_REGS_CX, 1, 16, 2, true) } },
	{ "-4@$5 8@$-1 4@$0x20", 3, { CONST(5, 4, true), CONST(-1, 8, false), CONST(32, 4, false) } },
	/* symbol(%rip): the symbol's address as a displacement from the probe */
	{ "-8@counter(%rip)", 1, { MEM(PT_REGS_IP, -1, 1, 0x4010 - 0x1000, 8, true) } },
	{ "4@counter+8(%rip)", 1, { MEM(PT_REGS_IP, -1, 1, 0x4018 - 0x1000, 4, false) } },
	{ "%rdi", 1, { REG(PT_REGS_DI, 8, false) } },
	{ "  4@%esi\t8@%rdx  ", 2, { REG(PT_REGS_SI, 4, false), REG(PT_REGS_DX, 8, false) } },
	{ "3@%eax", -1, { { 0 } } },
	{ "4@%ah", -1, { { 0 } } },
	{ "8@%xmm0", -1, { { 0 } } },
	{ "8@missing(%rip)", -1, { { 0 } } },
	{ "8@(%rax,%rdx,3)", -1, { { 0 } } },
	{ "8@-8(%rbp", -1, { { 0 } } },
	{ "4@$x", -1, { { 0 } } },
};

static bool same_location(const struct arg_location *a, const struct arg_location *b)
{
	if (a->kind != b->kind || a->size != b->size || a->is_signed != b->is_signed)
		return false;
	if (a->kind == ARG_LOCATION_CONSTANT)
		return a->displacement == b->displacement;
	if (a->register_offset != b->register_offset)
		return false;
	if (a->kind == ARG_LOCATION_REGISTER)
		return true;
	return a->index_offset == b->index_offset && a->scale == b->scale &&
	       a->displacement == b->displacement;
}

static void test_arguments(void)
{
	for (size_t i = 0; i < sizeof(argument_cases) / sizeof(argument_cases[0]); i++) {
		struct arg_location *locations = NULL;
		char *error = NULL;
		int count = usdt_parse_arguments(argument_cases[i].text, 0x1000, lookup_test_symbol,
						 NULL, &locations, &error);
		char *name = xasprintf("arguments: '%s'", argument_cases[i].text);
		char *why = NULL;

		if (argument_cases[i].count < 0) {
			if (count >= 0)
				why = xasprintf("accepted, expected an error");
			else if (!error || !strstr(error, "cannot decode USDT argument"))
				why = xasprintf("error sentence missing: %s", error ? error : "(none)");
		} else if (count != argument_cases[i].count) {
			why = xasprintf("%d arguments, expected %d (%s)", count,
					argument_cases[i].count, error ? error : "");
		} else {
			for (int j = 0; j < count && !why; j++) {
				const struct arg_location *got = &locations[j];
				if (!same_location(got, &argument_cases[i].expected[j]))
					why = xasprintf("argument %d: kind %d reg %d index %d scale %d "
							"disp %" PRId64 " size %d signed %d",
							j, got->kind, got->register_offset,
							got->index_offset, got->scale, got->displacement,
							got->size, got->is_signed);
			}
		}
		check(!why, name, why);
		free(why);
		free(name);
		free(locations);
		free(error);
	}
}

/* ---- ld.so.cache ---- */

static void put_u32(struct strbuf *sb, uint32_t value)
{
	strbuf_append(sb, (const char *)&value, 4);
}

/* A new-format cache with the given entries (flags, hwcap, name, path), after an
 * old-format table of old_entries empty entries (-1: a pure new-format file). */
static char *build_cache(int old_entries, const uint32_t *flags, const uint32_t *hwcaps,
			 const char *const *names, const char *const *paths, int count,
			 size_t *length)
{
	struct strbuf sb, strings;
	size_t start = 0;
	uint32_t string_base;

	strbuf_init(&sb);
	strbuf_init(&strings);
	if (old_entries >= 0) {
		strbuf_append(&sb, "ld.so-1.7.0\0", 12);
		put_u32(&sb, (uint32_t)old_entries);
		for (int i = 0; i < old_entries * 3; i++)
			put_u32(&sb, 0);
		while (sb.length % 8)
			strbuf_putc(&sb, '\0');
		start = sb.length;
	}
	strbuf_append(&sb, "glibc-ld.so.cache1.1", 20);
	put_u32(&sb, (uint32_t)count);
	put_u32(&sb, 0);                  /* string table length (unused here) */
	put_u32(&sb, 0);                  /* flags + padding */
	put_u32(&sb, 0);                  /* extension offset */
	for (int i = 0; i < 3; i++)
		put_u32(&sb, 0);
	string_base = (uint32_t)(sb.length - start + (size_t)count * 24);
	for (int i = 0; i < count; i++) {
		uint32_t key = string_base + (uint32_t)strings.length;
		strbuf_append(&strings, names[i], strlen(names[i]) + 1);
		uint32_t value = string_base + (uint32_t)strings.length;
		strbuf_append(&strings, paths[i], strlen(paths[i]) + 1);
		put_u32(&sb, flags[i]);
		put_u32(&sb, key);
		put_u32(&sb, value);
		put_u32(&sb, 0);
		put_u32(&sb, hwcaps ? hwcaps[i] : 0);
		put_u32(&sb, 0);
	}
	strbuf_append(&sb, strings.data, strings.length);
	strbuf_free(&strings);
	*length = sb.length;
	return strbuf_release(&sb);
}

static void test_ld_cache(void)
{
	const uint32_t flags[] = { 0x0003, 0x0303, 0x0303, 0x0303 };
	const char *const names[] = { "libfoo.so.1", "libfoo.so.1", "libfoobar.so.2", "libc.so.6" };
	const char *const paths[] = { "/lib32/libfoo.so.1", "/lib64/libfoo.so.1",
				      "/lib64/libfoobar.so.2", "/lib64/libc.so.6" };
	char *path = NULL;
	size_t length;

	for (int old = -1; old <= 2; old += 3) {
		char *cache = build_cache(old, flags, NULL, names, paths, 4, &length);
		const char *form = old < 0 ? "new format" : "old+new format";
		char *name;

		name = xasprintf("ld.so.cache %s: libfoo skips the i386 entry", form);
		int err = elf_ld_cache_lookup(cache, length, "libfoo", &path);
		check(err == 0 && strcmp(path, "/lib64/libfoo.so.1") == 0, name,
		      err ? strerror(-err) : path);
		free(name);
		free(path);
		path = NULL;
		name = xasprintf("ld.so.cache %s: libfoob is not libfoobar", form);
		check(elf_ld_cache_lookup(cache, length, "libfoob", &path) == -ENOENT, name,
		      "matched a longer name");
		free(name);
		free(path);
		path = NULL;
		name = xasprintf("ld.so.cache %s: exact name", form);
		err = elf_ld_cache_lookup(cache, length, "libfoobar.so.2", &path);
		check(err == 0 && strcmp(path, "/lib64/libfoobar.so.2") == 0, name, "not found");
		free(name);
		free(path);
		path = NULL;
		name = xasprintf("ld.so.cache %s: truncated file rejected", form);
		check(elf_ld_cache_lookup(cache, old < 0 ? 30 : 40, "libc", &path) == -EINVAL, name,
		      "accepted");
		free(name);
		free(cache);
	}
	/* a glibc-hwcaps build listed first is passed over for the plain one */
	const uint32_t hwcap_flags[] = { 0x0303, 0x0303 };
	const uint32_t hwcaps[] = { 1, 0 };
	const char *const hwcap_names[] = { "libbaz.so.1", "libbaz.so.1" };
	const char *const hwcap_paths[] = { "/lib64/glibc-hwcaps/x86-64-v3/libbaz.so.1",
					    "/lib64/libbaz.so.1" };
	char *hwcap_cache = build_cache(-1, hwcap_flags, hwcaps, hwcap_names, hwcap_paths, 2,
					&length);
	int hwcap_err = elf_ld_cache_lookup(hwcap_cache, length, "libbaz", &path);
	check(hwcap_err == 0 && strcmp(path, "/lib64/libbaz.so.1") == 0,
	      "ld.so.cache: plain build preferred over hwcaps", hwcap_err ? "not found" : path);
	free(path);
	path = NULL;
	free(hwcap_cache);
	check(elf_ld_cache_lookup("not a cache at all, no sir, not one bit of it", 45, "libc",
				  &path) == -EINVAL,
	      "ld.so.cache: garbage rejected", "accepted");

	size_t system_length;
	char *system_cache = read_file("/etc/ld.so.cache", &system_length);
	if (system_cache) {
		int err = elf_ld_cache_lookup(system_cache, system_length, "libc", &path);
		check(err == 0 && strstr(path, "libc.so.6") != NULL,
		      "ld.so.cache: system cache finds libc", err ? strerror(-err) : path);
		free(path);
		path = NULL;
		free(system_cache);
	}
}

/* ---- finding objects ---- */

static void test_resolve(void)
{
	char *path = NULL;
	int err = elf_resolve_binary("libc", 0, &path);

	check(err == 0 && strstr(path, "libc.so") && access(path, R_OK) == 0,
	      "resolve: libc by name", err ? strerror(-err) : path);
	free(path);
	path = NULL;
	err = elf_resolve_binary("c", 0, &path);
	check(err == 0 && strstr(path, "/libc.so") && access(path, R_OK) == 0,
	      "resolve: c is libc (BCC's shorthand)", err ? strerror(-err) : path);
	free(path);
	path = NULL;
	err = elf_resolve_binary("sh", 0, &path);
	check(err == 0 && path[0] == '/', "resolve: program on PATH", err ? strerror(-err) : path);
	free(path);
	path = NULL;
	check(elf_resolve_binary("/no/such/file", 0, &path) == -ENOENT,
	      "resolve: missing path is -ENOENT", "found");
	check(elf_resolve_binary("surely_no_library_is_called_this", 0, &path) == -ENOENT,
	      "resolve: unknown name is -ENOENT", "found");

	path_list objects = { 0 };
	bool has_libc = false, has_self = false;
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	err = elf_process_objects(getpid(), &objects);
	for (int i = 0; i < objects.count; i++) {
		has_libc |= strstr(objects.items[i], "libc.so") != NULL;
		has_self |= strcmp(objects.items[i], self) == 0;
	}
	check(err == 0 && has_libc && has_self, "process objects: self and libc mapped",
	      "missing from the list");
	path_list_free(&objects);
	path = NULL;
	err = elf_resolve_binary("libc", getpid(), &path);
	check(err == 0 && strstr(path, "libc.so"), "resolve: libc mapped into a pid",
	      err ? strerror(-err) : path);
	free(path);
}

static void test_open_errors(void)
{
	struct elf_object *object = NULL;
	char *error = NULL;
	int err = elf_object_open("/etc/hostname", &object, &error);

	if (err == -ENOENT) {
		free(error);
		error = NULL;
		err = elf_object_open("/proc/self/cmdline", &object, &error);
	}
	check(err < 0 && error && strstr(error, "not"), "open: a text file is not an ELF file",
	      error ? error : "accepted");
	free(error);
	error = NULL;
	err = elf_object_open("/no/such/binary", &object, &error);
	check(err == -ENOENT && error && strstr(error, "/no/such/binary"),
	      "open: missing file names the path", error ? error : "accepted");
	free(error);
}

int main(void)
{
	struct elf_object *object = NULL;
	char *error = NULL;

	if (elf_object_open("/proc/self/exe", &object, &error) < 0) {
		printf("FAIL open self: %s\n0 passed, 1 failed\n", error);
		return 1;
	}
	check(elf_object_is_relocatable(object) == (load_bias() != 0),
	      "open: PIE-ness matches the load bias", "ET_DYN but not moved, or the reverse");
	test_symbols(object);
	test_stapsdt(object);
	elf_object_close(object);
	test_arguments();
	test_ld_cache();
	test_resolve();
	test_open_errors();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
