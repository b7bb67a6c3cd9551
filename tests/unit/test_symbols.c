/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests for symbolization (runtime/symbols.c) and for how stacks, ksym/usym
 * and buf() values are printed (runtime/format.c), plus the %s/%r checks of
 * printf formats (common/printf_format.c).
 *
 * Kernel lookups run against a kallsyms file written by the test (so names
 * and offsets are known exactly) and, when this user can see addresses,
 * against the real /proc/kallsyms. User lookups name this test's own
 * functions through /proc/self/maps, its vDSO through sonde's copy of it,
 * code in anonymous memory through a perf map the test writes, and names
 * mangled as C++ and Rust mangle them through the demangler (given to C
 * functions as assembler names). Stack layouts are checked on address
 * arrays: user space cannot put entries into a stack-trace map. The
 * expected texts are what bpftrace 0.17 printed for the same stacks.
 */
#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel/elf.h"
#include "runtime/perf_map.h"

#include "common/printf_format.h"
#include "runtime/runtime.h"
#include "runtime/symbols.h"

static int passed;
static int failed;

static void check_text(const char *name, const char *got, const char *expected)
{
	if (strcmp(got, expected) == 0) {
		printf("PASS %s\n", name);
		passed++;
		return;
	}
	printf("FAIL %s: output differs\n--- expected\n%s\n--- got\n%s\n---\n", name, expected, got);
	failed++;
}

static void check_true(const char *name, bool ok, const char *why)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	}
}

static void skip(const char *name, const char *why)
{
	printf("SKIP %s: %s\n", name, why);
}

/* "name+offset" of a kernel or user lookup, or "-errno". */
static const char *lookup_text(int err, const struct symbol_lookup *symbol)
{
	static char text[256];

	if (err)
		snprintf(text, sizeof(text), "%d", err);
	else
		snprintf(text, sizeof(text), "%s+%llu", symbol->name,
			 (unsigned long long)symbol->offset);
	return text;
}

static const char *kernel_text(uint64_t address)
{
	struct symbol_lookup symbol;

	return lookup_text(symbols_kernel(address, &symbol), &symbol);
}

static struct type *stack_type(bool is_user, enum stack_mode mode, int depth)
{
	struct type *type = type_new(TYPE_STACK);

	type->size = sizeof(struct stack_value);
	type->is_user_pointer = is_user;
	type->stack_mode = mode;
	type->stack_depth = depth;
	return type;
}

/* ---- a kallsyms file with known contents ---- */

static char fake_kallsyms[64];

/* Points symbols.c at the file, writing it the first time. */
static void write_fake_kallsyms(void)
{
	if (fake_kallsyms[0]) {
		symbols_set_kallsyms_path(fake_kallsyms);
		return;
	}
	strcpy(fake_kallsyms, "/tmp/sonde-test-kallsyms-XXXXXX");
	int fd = mkstemp(fake_kallsyms);
	FILE *file = fdopen(fd, "w");

	fputs("0000000000000010 A percpu_thing\n"
	      "ffffffff81000000 T _stext\n"
	      "ffffffff81000000 T _text\n"
	      "ffffffff81001000 t do_one\n"
	      "ffffffff81002000 T do_two\n"
	      "ffffffffc0001000 t mod_func\t[some_module]\n"
	      "ffffffff81001800 W weak_between\n",
	      file);
	fclose(file);
	symbols_set_kallsyms_path(fake_kallsyms);
}

static void test_kernel_fake(void)
{
	write_fake_kallsyms();
	check_text("kernel_exact", kernel_text(0xffffffff81001000ull), "do_one+0");
	check_text("kernel_offset_decimal", kernel_text(0xffffffff81001010ull), "do_one+16");
	check_text("kernel_unsorted_input", kernel_text(0xffffffff81001900ull), "weak_between+256");
	check_text("kernel_alias_first_listed", kernel_text(0xffffffff81000004ull), "_stext+4");
	check_text("kernel_module_symbol", kernel_text(0xffffffffc0001002ull), "mod_func+2");
	struct symbol_lookup symbol;
	check_true("kernel_module_name", symbols_kernel(0xffffffffc0001002ull, &symbol) == 0 &&
		   symbol.module && strcmp(symbol.module, "some_module") == 0,
		   "the module of mod_func is not some_module");
	check_true("kernel_image_no_module", symbols_kernel(0xffffffff81001000ull, &symbol) == 0 &&
		   symbol.module == NULL, "do_one has a module");
	/* absolute symbols are not addresses: 0x20 has no symbol */
	check_text("kernel_absolute_skipped", kernel_text(0x20), "-2");
	check_text("kernel_below_all", kernel_text(0xffffffff80000000ull), "-2");
}

/* Many addresses named at once, without the whole table: the same names as
 * one at a time, aliases and unsorted lines included. */
static void test_kernel_batch(void)
{
	write_fake_kallsyms(); /* (setting the path drops the table loaded before) */
	uint64_t addresses[] = { 0xffffffff81001010ull, 0xffffffff81000004ull, 0xffffffff81001900ull,
				 0xffffffffc0001002ull, 0xffffffff80000000ull, 0xffffffff81001010ull,
				 0xffffffff81002000ull, 0xffffffff81001020ull, 0xffffffff81001700ull };
	/* the last two: no symbol starts between them and do_one's first address */
	const char *expected[] = { "do_one", "_stext", "weak_between", "mod_func", NULL, "do_one",
				   "do_two", "do_one", "do_one" };
	const char *names[9];
	symbols_kernel_names(addresses, 9, names);
	/* a second call finds them named already, with others new */
	uint64_t more[] = { 0xffffffff81001010ull, 0xffffffff81002100ull };
	const char *more_names[2];
	symbols_kernel_names(more, 2, more_names);
	for (int i = 0; i < 9; i++) {
		char name[32];
		snprintf(name, sizeof(name), "kernel_batch_%d", i);
		check_true(name, expected[i] ? names[i] && strcmp(names[i], expected[i]) == 0
					     : names[i] == NULL,
			   "a frame of the batch is misnamed");
	}
	check_true("kernel_batch_again", more_names[0] && strcmp(more_names[0], "do_one") == 0 &&
		   more_names[1] && strcmp(more_names[1], "do_two") == 0,
		   "a second batch is misnamed");
}

/* The address of a text symbol of the running kernel, read here without
 * symbols.c. 0 when kallsyms hides addresses. */
static uint64_t kallsyms_address(const char *wanted, uint64_t *next)
{
	FILE *file = fopen("/proc/kallsyms", "r");
	char line[512];
	uint64_t found = 0;

	*next = 0;
	if (!file)
		return 0;
	while (fgets(line, sizeof(line), file)) {
		unsigned long long address;
		char kind, name[256];
		if (sscanf(line, "%llx %c %255s", &address, &kind, name) != 3)
			continue;
		if (!found && strcmp(name, wanted) == 0 && (kind == 'T' || kind == 't'))
			found = address;
		else if (found && address > found && (*next == 0 || address < *next))
			*next = address;
	}
	fclose(file);
	return found;
}

/* The first function symbol of a loaded module (modules, or the pseudo
 * module [__builtin__ftrace] of ftrace's trampolines), named with it. */
static void test_kernel_real_module(void)
{
	FILE *file = fopen("/proc/kallsyms", "r");
	char line[512], name[256], module[128];
	unsigned long long address = 0;
	char kind;
	bool found = false;

	while (file && !found && fgets(line, sizeof(line), file))
		found = sscanf(line, "%llx %c %255s [%127[^]]]", &address, &kind, name, module) == 4 &&
			address != 0 && (kind == 't' || kind == 'T');
	if (file)
		fclose(file);
	if (!found) {
		skip("kernel_real_module", "no module function in /proc/kallsyms");
		return;
	}
	struct symbol_lookup symbol;
	int err = symbols_kernel(address, &symbol);
	check_true("kernel_real_module", err == 0 && strcmp(symbol.name, name) == 0 &&
		   symbol.module && strcmp(symbol.module, module) == 0,
		   err ? "no symbol" : symbol.name);
}

/* The batch (one pass over kallsyms) names 4,000 addresses spread over the
 * real kernel's text and modules exactly as the whole table does. */
static void test_kernel_real_batch(uint64_t low, uint64_t high)
{
	enum { COUNT = 4000 };
	uint64_t *addresses = xcalloc(COUNT, sizeof(*addresses));
	const char **names = xcalloc(COUNT, sizeof(*names));
	uint64_t seed = 88172645463325252ull;
	int differ = 0, named = 0;

	for (int i = 0; i < COUNT; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		addresses[i] = low + seed % (high - low);
	}
	symbols_set_kallsyms_path(NULL); /* a fresh start: no table */
	symbols_kernel_names(addresses, COUNT, names);
	for (int i = 0; i < COUNT; i++) {
		struct symbol_lookup symbol;
		const char *whole = symbols_kernel(addresses[i], &symbol) == 0 ? symbol.name : NULL;
		differ += (whole == NULL) != (names[i] == NULL) ||
			  (whole && names[i] && strcmp(whole, names[i]) != 0);
		named += names[i] != NULL;
	}
	check_true("kernel_real_batch_same_as_table", differ == 0 && named == COUNT,
		   "the batch names some addresses differently from the table");
	symbols_set_kallsyms_path(NULL);
	free(names);
	free(addresses);
}

static void test_kernel_real(void)
{
	uint64_t next;
	uint64_t address = kallsyms_address("vfs_read", &next);

	symbols_set_kallsyms_path(NULL);
	if (!address) {
		skip("kernel_real_vfs_read", "no vfs_read address in /proc/kallsyms (not root?)");
		return;
	}
	check_text("kernel_real_vfs_read", kernel_text(address), "vfs_read+0");
	struct symbol_lookup symbol;
	check_true("kernel_real_image_no_module", symbols_kernel(address, &symbol) == 0 &&
		   symbol.module == NULL, "vfs_read has a module");
	test_kernel_real_module();
	if (next > address + 5)
		check_text("kernel_real_vfs_read_offset", kernel_text(address + 5), "vfs_read+5");
	uint64_t unused, text = kallsyms_address("_stext", &unused);
	uint64_t text_end = kallsyms_address("_etext", &unused);
	if (text && text_end > text)
		test_kernel_real_batch(text, text_end);
}

/* ---- user symbols ---- */

__attribute__((noinline)) int test_symbols_target(int x);
__attribute__((noinline)) int test_symbols_target(int x)
{
	__asm__ volatile("");
	return x * 3 + 1;
}

static void test_user_self(void)
{
	struct symbol_lookup symbol;
	uint64_t address = (uint64_t)(uintptr_t)&test_symbols_target;
	char self[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);

	check_text("user_self_function",
		   lookup_text(symbols_user(getpid(), address, &symbol), &symbol),
		   "test_symbols_target+0");
	check_text("user_self_offset",
		   lookup_text(symbols_user(getpid(), address + 3, &symbol), &symbol),
		   "test_symbols_target+3");
	if (length > 0) {
		self[length] = '\0';
		check_text("user_self_module", symbols_user(getpid(), address, &symbol) == 0
			   ? symbol.module : "(none)", self);
	}
	/* a libc function, through the shared library's mapping (strtoull is an
	 * alias of strtoul on 64-bit glibc, and the plainer name is shown) */
	uint64_t libc_address = (uint64_t)(uintptr_t)&strtoull;
	int err = symbols_user(getpid(), libc_address, &symbol);
	check_true("user_libc_function", err == 0 && symbol.offset == 0 &&
		   strstr(symbol.name, "strtoul") != NULL,
		   err ? "no symbol" : symbol.name);
	/* anonymous memory and unmapped addresses have no name */
	int on_stack;
	check_true("user_stack_address_unknown",
		   symbols_user(getpid(), (uint64_t)(uintptr_t)&on_stack, &symbol) == -ENOENT,
		   "a stack address was named");
}

/* C++ and Rust (legacy scheme) names, as their compilers mangle them */
__attribute__((noinline)) int test_cxx_method(int x) __asm__("_ZN5sonde6Widget6methodEi");
__attribute__((noinline)) int test_cxx_method(int x)
{
	__asm__ volatile("");
	return x + 2;
}

__attribute__((noinline)) int test_rust_function(int x)
	__asm__("_ZN5sonde4heat5sweep17h0123456789abcdefE");
__attribute__((noinline)) int test_rust_function(int x)
{
	__asm__ volatile("");
	return x + 5;
}

static void test_user_demangled(void)
{
	struct symbol_lookup symbol;

	check_text("user_demangled_cxx",
		   lookup_text(symbols_user(getpid(), (uint64_t)(uintptr_t)&test_cxx_method + 1,
					    &symbol), &symbol),
		   "sonde::Widget::method(int)+1");
	check_text("user_demangled_rust",
		   lookup_text(symbols_user(getpid(), (uint64_t)(uintptr_t)&test_rust_function,
					    &symbol), &symbol),
		   "sonde::heat::sweep+0");
	/* a second lookup finds the name demangled once already */
	check_text("user_demangled_again",
		   lookup_text(symbols_user(getpid(), (uint64_t)(uintptr_t)&test_cxx_method,
					    &symbol), &symbol),
		   "sonde::Widget::method(int)+0");
}

/* The vDSO has no file: its functions are named from sonde's own copy. */
static void test_user_vdso(void)
{
	const void *image = (const void *)getauxval(AT_SYSINFO_EHDR);
	struct elf_object *elf = NULL;
	struct elf_symbol found;
	struct symbol_lookup symbol;
	char *error = NULL;

	if (!image) {
		skip("user_vdso", "no vDSO in this process");
		return;
	}
	/* its __vdso_clock_gettime, found here with the ELF reader directly;
	 * the section headers end the image */
	const Elf64_Ehdr *header = image;
	size_t size = header->e_shoff + (size_t)header->e_shnum * header->e_shentsize;
	if (elf_object_open_memory(image, size, "[vdso]", &elf, &error) < 0 ||
	    elf_object_find_symbol(elf, "__vdso_clock_gettime", &found) < 0) {
		check_true("user_vdso", false, error ? error : "no __vdso_clock_gettime");
		free(error);
		elf_object_close(elf);
		return;
	}
	elf_object_close(elf);
	uint64_t address = (uint64_t)(uintptr_t)image + found.address + 4;
	int err = symbols_user(getpid(), address, &symbol);
	check_text("user_vdso_function", lookup_text(err, &symbol), "__vdso_clock_gettime+4");
	check_true("user_vdso_module", err == 0 && strcmp(symbol.module, "[vdso]") == 0,
		   err ? "no symbol" : symbol.module);
}

static void append_text(const char *path, const char *text)
{
	FILE *file = fopen(path, "a");

	if (file) {
		fputs(text, file);
		fclose(file);
	}
}

static const char *perf_map_text(const struct perf_map *map, uint64_t address)
{
	static char text[256];
	const char *name;
	uint64_t offset;

	if (perf_map_lookup(map, address, &name, &offset) < 0)
		return "-2";
	snprintf(text, sizeof(text), "%s+%llu", name, (unsigned long long)offset);
	return text;
}

/* The format's edge cases on the reader alone. */
static void test_perf_map_file(void)
{
	char path[] = "/tmp/sonde-test-perfmap-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		skip("perf_map", "cannot create a file in /tmp");
		return;
	}
	close(fd);
	/* unsorted, names with spaces, a torn last line */
	append_text(path, "2000 100 second one\n"
			  "1000 80 first: with (spaces) [and brackets]\n"
			  "3000 size name\n"
			  "zz 10 bad\n"
			  "4000 0 empty\n"
			  "5000 40 torn");
	struct perf_map *map = perf_map_new(path);
	perf_map_refresh(map);
	check_text("perf_map_spaces", perf_map_text(map, 0x1010),
		   "first: with (spaces) [and brackets]+16");
	check_text("perf_map_unsorted", perf_map_text(map, 0x20ff), "second one+255");
	check_text("perf_map_past_end", perf_map_text(map, 0x2100), "-2");
	check_text("perf_map_zero_size", perf_map_text(map, 0x4000), "-2");
	check_text("perf_map_torn_line_waits", perf_map_text(map, 0x5000), "-2");
	/* lines written later: the torn one completed, a range reused (the
	 * later line wins), an overlap inside an earlier entry */
	append_text(path, " line done\n"
			  "2000 20 reused range\n"
			  "1040 8 inner\n");
	check_text("perf_map_not_reread_yet", perf_map_text(map, 0x2000), "second one+0");
	perf_map_refresh(map);
	check_text("perf_map_completed_line", perf_map_text(map, 0x5001), "torn line done+1");
	check_text("perf_map_later_wins", perf_map_text(map, 0x2001), "reused range+1");
	check_text("perf_map_earlier_outside_later", perf_map_text(map, 0x2030), "second one+48");
	check_text("perf_map_inner_overlap", perf_map_text(map, 0x1041), "inner+1");
	check_text("perf_map_outer_after_inner", perf_map_text(map, 0x1050),
		   "first: with (spaces) [and brackets]+80");
	/* a replaced file (another process with the same pid) starts over */
	unlink(path);
	append_text(path, "9000 10 new file\n");
	perf_map_refresh(map);
	check_text("perf_map_replaced_new", perf_map_text(map, 0x9000), "new file+0");
	check_text("perf_map_replaced_old_gone", perf_map_text(map, 0x1010), "-2");
	/* a file that is gone keeps what was read */
	unlink(path);
	perf_map_refresh(map);
	check_text("perf_map_deleted_kept", perf_map_text(map, 0x9001), "new file+1");
	check_text("perf_map_path", perf_map_path(map), path);
	perf_map_free(map);
}

/* Anonymous executable memory of this process named by /tmp/perf-PID.map. */
static void test_user_jit(void)
{
	char path[64], line[128];
	struct symbol_lookup symbol;
	void *code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (code == MAP_FAILED) {
		skip("user_jit", "no anonymous executable mapping");
		return;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	uint64_t base = (uint64_t)(uintptr_t)code;
	check_true("user_jit_without_map", symbols_user(getpid(), base + 0x10, &symbol) == -ENOENT,
		   "anonymous code was named without a perf map");
	snprintf(line, sizeof(line), "%llx 40 Interpreted:jit function one\n",
		 (unsigned long long)base);
	append_text(path, line);
	usleep(110000); /* past the 100 ms between checks of the file */
	int err = symbols_user(getpid(), base + 0x10, &symbol);
	check_text("user_jit_function", lookup_text(err, &symbol), "Interpreted:jit function one+16");
	check_true("user_jit_module", err == 0 && strcmp(symbol.module, path) == 0,
		   err ? "no symbol" : symbol.module);
	snprintf(line, sizeof(line), "%llx 20 jit function two\n",
		 (unsigned long long)(base + 0x100));
	append_text(path, line);
	usleep(110000);
	check_text("user_jit_appended",
		   lookup_text(symbols_user(getpid(), base + 0x104, &symbol), &symbol),
		   "jit function two+4");
	unlink(path);
	munmap(code, 4096);
}

/* symbols_user_prepare() reads a process while it lives, so its addresses
 * are named after it has exited. The child is a fork of this test, so its
 * functions are where ours are. */
static void test_user_prepared(void)
{
	struct symbol_lookup symbol;
	int ready[2];
	char byte;

	if (pipe(ready) < 0) {
		skip("user_prepared", "no pipe");
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		close(ready[0]);
		if (write(ready[1], "x", 1) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &byte, 1) != 1)
		byte = 0;
	close(ready[0]);
	int prepared = symbols_user_prepare(child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	check_true("user_prepare_alive", prepared == 0, "preparing a live process failed");
	check_text("user_prepared_after_exit",
		   lookup_text(symbols_user(child, (uint64_t)(uintptr_t)&test_symbols_target + 2,
					    &symbol), &symbol),
		   "test_symbols_target+2");
	check_true("user_prepare_gone", symbols_user_prepare(child) == 0,
		   "a process read before lost its maps when it exited");
	pid_t gone = fork();
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	check_true("user_prepare_never_seen", symbols_user_prepare(gone) == -ENOENT,
		   "an exited process that was never read was prepared");
}

/* The executable mappings of this process: [start, end) pairs, at most max. */
static int self_code_ranges(uint64_t (*ranges)[2], int max)
{
	FILE *file = fopen("/proc/self/maps", "r");
	char line[512];
	int count = 0;

	while (file && count < max && fgets(line, sizeof(line), file)) {
		unsigned long long start, end;
		char perms[8], path[256] = "";
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %255s", &start, &end, perms, path) >= 3 &&
		    strchr(perms, 'x') && path[0] == '/') {
			ranges[count][0] = start;
			ranges[count][1] = end;
			count++;
		}
	}
	if (file)
		fclose(file);
	return count;
}

/* symbols_user_batch() names 3,000 addresses spread over this process's
 * code (the test binary, libc, libelf...) exactly as the whole tables do. */
static void test_user_batch(void)
{
	enum { COUNT = 3000 };
	uint64_t ranges[32][2];
	int range_count = self_code_ranges(ranges, 32);
	struct symbols_user_address *addresses = xcalloc(COUNT, sizeof(*addresses));
	char **batch_names = xcalloc(COUNT, sizeof(char *));
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int differ = 0, named = 0;

	if (range_count == 0) {
		skip("user_batch_same_as_table", "no executable file mappings");
		free(addresses);
		free(batch_names);
		return;
	}
	for (int i = 0; i < COUNT; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
		const uint64_t *range = ranges[seed % (uint64_t)range_count];
		addresses[i] = (struct symbols_user_address){
			.pid = getpid(), .address = range[0] + (seed >> 20) % (range[1] - range[0]),
		};
	}
	symbols_free();
	symbols_user_batch(addresses, COUNT);
	for (int i = 0; i < COUNT; i++) {
		struct symbol_lookup symbol;
		if (symbols_user(getpid(), addresses[i].address, &symbol) == 0)
			batch_names[i] = xasprintf("%s+%llu", symbol.name,
						   (unsigned long long)symbol.offset);
	}
	symbols_free(); /* again, with whole tables */
	for (int i = 0; i < COUNT; i++) {
		struct symbol_lookup symbol;
		char *whole = symbols_user(getpid(), addresses[i].address, &symbol) == 0
			      ? xasprintf("%s+%llu", symbol.name, (unsigned long long)symbol.offset)
			      : NULL;
		differ += (whole == NULL) != (batch_names[i] == NULL) ||
			  (whole && batch_names[i] && strcmp(whole, batch_names[i]) != 0);
		named += whole != NULL;
		free(whole);
		free(batch_names[i]);
	}
	check_true("user_batch_same_as_table", differ == 0 && named > COUNT / 4,
		   "the batch names some addresses differently from the tables");
	symbols_free();
	free(batch_names);
	free(addresses);
}

static void test_user_gone(void)
{
	struct symbol_lookup symbol;
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	check_true("user_process_gone", symbols_user(child, 0x401000, &symbol) == -ENOENT,
		   "an exited process was symbolized");
	check_true("user_pid_zero", symbols_user(0, 0x401000, &symbol) == -ENOENT,
		   "pid 0 was symbolized");
}

/* ---- stack layouts ---- */

static char *stack_text(const struct type *type, uint64_t pid, const uint64_t *frames, int count,
			int indent)
{
	struct strbuf sb;

	strbuf_init(&sb);
	format_stack_frames(&sb, type, pid, frames, count, indent);
	return sb.data ? strbuf_release(&sb) : xstrdup("");
}

static void test_stack_layouts(void)
{
	write_fake_kallsyms();
	uint64_t frames[] = { 0xffffffff81001010ull, 0xffffffff81002004ull, 0xffffffff81000000ull,
			      0x1234 };
	char *text;

	/* bpftrace -e 'k:f { printf("%s", kstack); }' and print(kstack):
	 * a newline, then each frame indented by 8 */
	text = stack_text(stack_type(false, STACK_MODE_BPFTRACE, 127), 0, frames, 3, 8);
	check_text("stack_bpftrace_value", text,
		   "\n        do_one+16\n        do_two+4\n        _stext+0\n");
	free(text);

	/* @[kstack] = count(): frames indented by 4 inside "@[" ... "]" */
	text = stack_text(stack_type(false, STACK_MODE_BPFTRACE, 127), 0, frames, 3, 4);
	check_text("stack_bpftrace_key", text, "\n    do_one+16\n    do_two+4\n    _stext+0\n");
	free(text);

	text = stack_text(stack_type(false, STACK_MODE_BPFTRACE, 2), 0, frames, 3, 8);
	check_text("stack_depth_limit", text, "\n        do_one+16\n        do_two+4\n");
	free(text);

	/* an address below every symbol prints as hex */
	text = stack_text(stack_type(false, STACK_MODE_BPFTRACE, 127), 0, frames + 3, 1, 8);
	check_text("stack_unknown_frame", text, "\n        0x1234\n");
	free(text);

	/* kstack(perf): "\taddress name+offset", no object for kernel frames */
	text = stack_text(stack_type(false, STACK_MODE_PERF, 127), 0, frames, 2, 4);
	check_text("stack_perf_kernel", text,
		   "\n\tffffffff81001010 do_one+16\n\tffffffff81002004 do_two+4\n");
	free(text);

	text = stack_text(stack_type(false, STACK_MODE_RAW, 127), 0, frames, 2, 8);
	check_text("stack_raw", text, "\nffffffff81001010\nffffffff81002004\n");
	free(text);

	text = stack_text(stack_type(false, STACK_MODE_BPFTRACE, 127), 0, frames, 0, 8);
	check_text("stack_empty", text, "\n");
	free(text);

	/* user frames: this test's own function, then an address no process
	 * maps; perf mode adds the object, or [unknown] */
	char self[PATH_MAX];
	ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[length > 0 ? length : 0] = '\0';
	uint64_t user_frames[] = { (uint64_t)(uintptr_t)&test_symbols_target + 3, 0x10 };
	text = stack_text(stack_type(true, STACK_MODE_BPFTRACE, 127), (uint64_t)getpid(),
			  user_frames, 2, 8);
	check_text("stack_user_bpftrace", text, "\n        test_symbols_target+3\n        0x10\n");
	free(text);

	text = stack_text(stack_type(true, STACK_MODE_PERF, 127), (uint64_t)getpid(), user_frames,
			  2, 8);
	char *expected = xasprintf("\n\t%llx test_symbols_target+3 (%s)\n\t10 0x10 ([unknown])\n",
				   (unsigned long long)user_frames[0], self);
	check_text("stack_user_perf", text, expected);
	free(expected);
	free(text);
}

/* Stack ids the kernel could not fill, and ids with no map behind them. */
static void test_stack_ids(void)
{
	struct type *type = stack_type(false, STACK_MODE_BPFTRACE, 127);
	struct stack_value value = { .stack_id = -EFAULT };
	uint64_t frames[SYMBOLS_MAX_FRAMES];
	struct strbuf sb;

	check_true("read_stack_negative", symbols_read_stack(SYMBOLS_MAX_FRAMES, -EEXIST, frames) == -EEXIST,
		   "negative id not returned");
	symbols_set_stack_map(-1, -1);
	check_true("read_stack_no_map", symbols_read_stack(SYMBOLS_MAX_FRAMES, 3, frames) == -ENOENT,
		   "no map, yet a stack");

	/* no kernel stack in a user-space probe: bpftrace prints nothing */
	strbuf_init(&sb);
	format_value(&sb, type, &value, false);
	check_text("stack_efault_empty", sb.data ? sb.data : "", "");
	strbuf_reset(&sb);
	value.stack_id = -EEXIST;
	format_value(&sb, type, &value, false);
	check_text("stack_lost_line", sb.data ? sb.data : "", "\n        [unknown stack]\n");
	strbuf_reset(&sb);
	format_value(&sb, type, &value, true);
	check_text("stack_lost_json", sb.data ? sb.data : "", "\"\\n        [unknown stack]\\n\"");
	strbuf_free(&sb);

	/* a real, empty stack-trace map: a missing id reads as -ENOENT */
	int fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "sonde_test_stk", 4,
				SYMBOLS_MAX_FRAMES * 8, 16, NULL);
	if (fd < 0) {
		skip("read_stack_missing_id", "cannot create a stack map (not root?)");
		return;
	}
	symbols_set_stack_map(SYMBOLS_MAX_FRAMES, fd);
	check_true("read_stack_missing_id", symbols_read_stack(SYMBOLS_MAX_FRAMES, 5, frames) == -ENOENT,
		   "missing id found");
	check_true("read_stack_other_depth", symbols_read_stack(3, 5, frames) == -ENOENT,
		   "a depth without a map found a stack");
	symbols_set_stack_map(-1, -1);
	close(fd);
}

/* ---- ksym, usym, buf ---- */

static char *value_text(const struct type *type, const void *data, bool json)
{
	struct strbuf sb;

	strbuf_init(&sb);
	format_value(&sb, type, data, json);
	return sb.data ? strbuf_release(&sb) : xstrdup("");
}

static void test_symbol_values(void)
{
	write_fake_kallsyms();
	struct type *ksym = type_new(TYPE_SYMBOL);
	struct type *usym = type_new(TYPE_SYMBOL);
	ksym->size = usym->size = sizeof(struct symbol_value);
	usym->is_user_pointer = true;
	struct symbol_value value = { .address = 0xffffffff81001010ull };
	char *text;

	/* ksym() prints the name alone, never the offset */
	text = value_text(ksym, &value, false);
	check_text("ksym_name_only", text, "do_one");
	free(text);
	text = value_text(ksym, &value, true);
	check_text("ksym_json", text, "\"do_one\"");
	free(text);
	value.address = 1;
	text = value_text(ksym, &value, false);
	check_text("ksym_unknown_hex", text, "0x1");
	free(text);
	/* C++'s showbase, which bpftrace uses, writes zero without 0x */
	value.address = 0;
	text = value_text(ksym, &value, false);
	check_text("ksym_zero", text, "0");
	free(text);

	value.address = (uint64_t)(uintptr_t)&test_symbols_target + 2;
	value.pid = (uint64_t)getpid();
	text = value_text(usym, &value, false);
	check_text("usym_name_only", text, "test_symbols_target");
	free(text);
}

static void test_buffers(void)
{
	struct strbuf sb;
	static const char bytes[] = "hi\tthere\n\x01\xff\"\\ ok~\x7f";

	strbuf_init(&sb);
	format_escaped(&sb, bytes, sizeof(bytes) - 1);
	/* as bpftrace -e '... printf("%r", buf(p, n))' printed the same bytes */
	check_text("escape_bytes", sb.data, "hi\\x09there\\x0a\\x01\\xff\"\\ ok~\\x7f");
	strbuf_free(&sb);

	struct type *type = type_new(TYPE_BUFFER);
	type->size = 8 + 8;
	unsigned char data[16] = { 0 };
	uint64_t length = 3;
	memcpy(data, &length, 8);
	memcpy(data + 8, "a\0bcdefg", 8);
	char *text = value_text(type, data, false);
	check_text("buffer_length", text, "a\\x00b");
	free(text);
	text = value_text(type, data, true);
	check_text("buffer_json", text, "\"a\\\\x00b\"");
	free(text);
	/* a length past the room (never written by sonde) stops at the room */
	length = 100;
	memcpy(data, &length, 8);
	text = value_text(type, data, false);
	check_text("buffer_length_clamped", text, "a\\x00bcdefg");
	free(text);
}

/* ---- printf checks ---- */

static struct format_piece conversion(const char *text)
{
	return (struct format_piece){ .is_conversion = true, .text = (char *)text,
				      .conversion = text[strlen(text) - 1] };
}

static void test_format_checks(void)
{
	struct format_piece s = conversion("%s"), r = conversion("%r"), d = conversion("%d");
	struct type *buffer = type_new(TYPE_BUFFER);
	struct type *symbol = type_new(TYPE_SYMBOL);
	struct type *stack = stack_type(false, STACK_MODE_BPFTRACE, 127);
	char *message;

	check_true("check_s_stack_symbol", !format_check_arg(&s, stack) &&
		   !format_check_arg(&s, symbol), "%s refused a stack or symbol");
	check_true("check_r_buffer_string", !format_check_arg(&r, buffer) &&
		   !format_check_arg(&r, type_string(8)), "%r refused a buffer or string");
	message = format_check_arg(&r, type_int(8, true));
	check_text("check_r_integer", message ? message : "(accepted)",
		   "%r specifier expects a value of type buffer (integer supplied)");
	free(message);
	message = format_check_arg(&s, buffer);
	check_text("check_s_buffer", message ? message : "(accepted)",
		   "%s specifier expects a value of type string (buffer supplied)");
	free(message);
	message = format_check_arg(&d, stack);
	check_true("check_d_stack", message != NULL, "%d accepted a stack");
	free(message);

	struct format_pieces pieces;
	char *error = NULL;
	int offset;
	check_true("parse_r_width", format_parse("<%-12r>", &pieces, &error, &offset) == 0 &&
		   pieces.conversion_count == 1 && pieces.items[1].conversion == 'r',
		   error ? error : "not one %r");
	format_pieces_free(&pieces);
	free(error);
	error = NULL;
	check_true("parse_r_length_modifier", format_parse("%lr", &pieces, &error, &offset) < 0,
		   "%lr accepted");
	free(error);
}

int main(void)
{
	test_kernel_fake();
	test_kernel_batch();
	test_kernel_real();
	test_user_self();
	test_user_batch();
	test_user_gone();
	test_user_demangled();
	test_user_vdso();
	test_perf_map_file();
	test_user_jit();
	test_user_prepared();
	test_stack_layouts();
	test_stack_ids();
	test_symbol_values();
	test_buffers();
	test_format_checks();

	symbols_set_kallsyms_path(NULL);
	symbols_free();
	if (fake_kallsyms[0])
		unlink(fake_kallsyms);
	type_free_all();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
