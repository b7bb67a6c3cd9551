/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Symbolization: kernel addresses through /proc/kallsyms, user addresses
 * through /proc/PID/maps and the mapped objects' ELF symbols.
 *
 * Kernel: kallsyms is read once, the first time a kernel address needs a
 * name, into one buffer whose lines are cut in place into names; a sorted
 * array of (address, name) is searched for the last symbol at or below the
 * address. kallsyms has no sizes, so every address past a symbol belongs to
 * it, which is also how bpftrace names kernel frames. Several names can
 * share an address (_text and _stext); the one listed first wins, so the
 * choice does not depend on the sort.
 *
 * User: the address of a frame means nothing outside its process, so each
 * pid's executable mappings are read from /proc/PID/maps the first time the
 * pid is seen. An address inside a mapping becomes a file offset in the
 * mapped object, and the object's function symbols, converted once from
 * link-time addresses to file offsets (elf_object_address_to_offset), are
 * searched by offset. Working in file offsets makes PIE executables, fixed
 * executables and shared libraries the same case. Objects are shared between
 * processes by device and inode, and opened through /proc/PID/root so that a
 * process in a container is read from its own filesystem. Printing a map of
 * thousands of stacks names its frames first in a batch
 * (symbols_user_batch): each object's symbols are read once and only the
 * names that hold those addresses are kept, the same answers for a fraction
 * of the memory and time of whole tables.
 *
 * Three kinds of code have no file behind them. The vDSO is the same image
 * in every process, so sonde's own copy (found through AT_SYSINFO_EHDR) is
 * read as if it were the file mapped at [vdso]. Code a JIT generated lives
 * in anonymous memory and is named by the process's /tmp/perf-PID.map
 * (runtime/perf_map.c), re-read when it grew. Anything else is unknown.
 *
 * A process must still be alive when its maps are read. Programs that take
 * user stacks or symbols tell the runtime about every new process as it
 * appears (symbols_user_prepare()), so the maps and the mapped objects are
 * read then, not when the output is printed after the process has exited.
 * A process that exited before either cannot be symbolized: its frames
 * print as hex addresses, as bpftrace's do.
 *
 * C++ and Rust names are demangled the way perf does it, by libiberty's
 * cplus_demangle, the first time a symbol is the answer to a lookup.
 */
#include "runtime/symbols.h"

#include <bpf/bpf.h>
#include <elf.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "common/util.h"
#include "kernel/elf.h"
#include "kernel/kallsyms.h"
#include "kernel/procmaps.h"
#include "runtime/perf_map.h"

/* ---- stack map ---- */

/* fd of the stack map of each depth; -1 where the program has none */
static int symbols_stack_map_fds[SYMBOLS_MAX_FRAMES + 1];
static bool symbols_stack_maps_ready;

void symbols_set_stack_map(int depth, int fd)
{
	if (!symbols_stack_maps_ready || depth < 0) {
		for (int i = 0; i <= SYMBOLS_MAX_FRAMES; i++)
			symbols_stack_map_fds[i] = -1;
		symbols_stack_maps_ready = true;
	}
	if (depth > 0 && depth <= SYMBOLS_MAX_FRAMES)
		symbols_stack_map_fds[depth] = fd;
}

int symbols_read_stack(int depth, int64_t stack_id, uint64_t *frames)
{
	if (stack_id < 0)
		return stack_id < -4095 ? -EINVAL : (int)stack_id;
	int symbols_stack_map_fd = symbols_stack_maps_ready && depth > 0 && depth <= SYMBOLS_MAX_FRAMES
					   ? symbols_stack_map_fds[depth] : -1;
	if (symbols_stack_map_fd < 0 || stack_id > UINT32_MAX)
		return -ENOENT;

	uint32_t key = (uint32_t)stack_id;
	memset(frames, 0, SYMBOLS_MAX_FRAMES * sizeof(*frames));
	if (bpf_map_lookup_elem(symbols_stack_map_fd, &key, frames) != 0)
		return -ENOENT;
	int count = 0;
	while (count < SYMBOLS_MAX_FRAMES && frames[count])
		count++;
	return count;
}

/* ---- kernel symbols ---- */

struct kernel_named {
	uint64_t address;
	char *name;
};

/* 16 bytes a symbol: a profile of the kernel holds some 120,000 of them. */
struct kernel_symbol {
	uint64_t address;
	uint32_t name;   /* offset in kernel.names; grows with the line, so it also
			  * orders aliases as kallsyms lists them */
	int32_t module;  /* index in kernel.modules; -1 in the kernel image */
};

static struct {
	bool loaded;
	char *path;    /* NULL: /proc/kallsyms */
	struct strbuf names;  /* every name, NUL-terminated, one after another */
	VEC(char *) modules;  /* "ext4" for "[ext4]", each once */
	struct kernel_symbol *symbols;
	int count;
	/* symbols_kernel_names() without the table: addresses already named
	 * (name NULL: none), sorted by address */
	VEC(struct kernel_named) named;
} kernel;

static int kernel_compare(const void *pa, const void *pb)
{
	const struct kernel_symbol *a = pa, *b = pb;

	if (a->address != b->address)
		return a->address < b->address ? -1 : 1;
	return (a->name > b->name) - (a->name < b->name);
}

/* The index of a module's name; kallsyms lists a module's symbols together,
 * so the last one is nearly always the one. */
static int32_t kernel_module_index(const char *module, size_t length)
{
	for (int i = kernel.modules.count - 1; i >= 0; i--) {
		const char *known = kernel.modules.items[i];
		if (strlen(known) == length && memcmp(known, module, length) == 0)
			return i;
	}
	vec_push(&kernel.modules, xstrndup(module, length));
	return kernel.modules.count - 1;
}

/*
 * A symbol line with a real address. Absolute symbols ('a', 'A') are
 * offsets rather than addresses, and a zero address means kallsyms hides
 * addresses from this user: false for those.
 */
static bool kallsyms_has_address(const struct kallsyms_line *line)
{
	return line->address != 0 && line->type != 'a' && line->type != 'A';
}

static void kernel_keep_symbol(const struct kallsyms_line *parsed, void *context)
{
	int *capacity = context;

	if (!kallsyms_has_address(parsed) ||
	    kernel.names.length > UINT32_MAX - parsed->name_length - 1)
		return;
	int32_t module = parsed->module ? kernel_module_index(parsed->module,
							      parsed->module_length) : -1;
	if (kernel.count == *capacity) {
		*capacity = *capacity ? *capacity * 2 : 4096;
		kernel.symbols = xrealloc(kernel.symbols, sizeof(*kernel.symbols) * *capacity);
	}
	kernel.symbols[kernel.count++] = (struct kernel_symbol){
		.address = parsed->address, .name = (uint32_t)kernel.names.length,
		.module = module,
	};
	strbuf_append(&kernel.names, parsed->name, parsed->name_length);
	strbuf_putc(&kernel.names, '\0');
}

/* The whole table, for lookups one at a time (ksym(), kstack in printf and
 * maps): only the names are kept. */
static void kernel_load(void)
{
	int capacity = 0;

	kernel.loaded = true;
	if (kallsyms_each(kernel.path, kernel_keep_symbol, &capacity) < 0)
		return;
	qsort(kernel.symbols, kernel.count, sizeof(*kernel.symbols), kernel_compare);
}

int symbols_kernel(uint64_t address, struct symbol_lookup *out)
{
	if (!kernel.loaded)
		kernel_load();

	/* the last symbol whose address is <= address */
	int low = 0, high = kernel.count;
	while (low < high) {
		int middle = low + (high - low) / 2;
		if (kernel.symbols[middle].address <= address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return -ENOENT;
	int found = low - 1;
	while (found > 0 && kernel.symbols[found - 1].address == kernel.symbols[found].address)
		found--;
	const struct kernel_symbol *symbol = &kernel.symbols[found];
	out->name = kernel.names.data + symbol->name;
	out->offset = address - symbol->address;
	out->module = symbol->module >= 0 ? kernel.modules.items[symbol->module] : NULL;
	return 0;
}

static int compare_addresses(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return (a > b) - (a < b);
}

static struct kernel_named *kernel_named_find(uint64_t address)
{
	int low = 0, high = kernel.named.count - 1;
	while (low <= high) {
		int middle = low + (high - low) / 2;
		uint64_t found = kernel.named.items[middle].address;
		if (found == address)
			return &kernel.named.items[middle];
		if (found < address)
			low = middle + 1;
		else
			high = middle - 1;
	}
	return NULL;
}

static int compare_named(const void *pa, const void *pb)
{
	const struct kernel_named *a = pa, *b = pb;
	return (a->address > b->address) - (a->address < b->address);
}

/* A wanted address's slot: the highest symbol start seen for it so far. */
struct kernel_holder {
	uint64_t start;
	bool found;
	struct strbuf name;
};

struct kernel_batch {
	const uint64_t *addresses;
	int count;
	struct kernel_holder *holders;
};

static void kernel_hold_symbol(const struct kallsyms_line *parsed, void *context)
{
	struct kernel_batch *batch = context;

	if (!kallsyms_has_address(parsed))
		return;
	/* the first wanted address at or above the start */
	int low = 0, high = batch->count;
	while (low < high) {
		int middle = low + (high - low) / 2;
		if (batch->addresses[middle] < parsed->address)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == batch->count)
		return;
	struct kernel_holder *holder = &batch->holders[low];
	/* the first line of an address wins, as in the whole table */
	if (holder->found && holder->start >= parsed->address)
		return;
	holder->found = true;
	holder->start = parsed->address;
	strbuf_reset(&holder->name);
	strbuf_append(&holder->name, parsed->name, parsed->name_length);
}

/*
 * Names the addresses not named yet (sorted, distinct) in one pass over
 * kallsyms, keeping only the names that can hold one of them. The symbol
 * holding an address is the last one starting at or below it. A line can
 * only hold addresses from the first wanted one at or above its start
 * (call it W): if it does not hold W, a later start lies between it and W
 * and so before every wanted address after W too. So each line competes
 * for one slot, W's, and keeps its name there only while it is the highest
 * start seen for W. At the end, an address whose slot stayed empty has no
 * symbol start between it and the wanted address before it: it shares that
 * one's holder. A big profile's few thousand kernel frames then cost their
 * names, not 120,000 of them, for one read of the file.
 */
static void kernel_name_batch(const uint64_t *addresses, int count)
{
	struct kernel_holder *holders = xcalloc((size_t)count + 1, sizeof(*holders));
	struct kernel_batch batch = { addresses, count, holders };

	kallsyms_each(kernel.path, kernel_hold_symbol, &batch);
	const struct kernel_holder *previous = NULL;
	for (int i = 0; i < count; i++) {
		if (holders[i].found)
			previous = &holders[i];
		struct kernel_named named = {
			.address = addresses[i],
			.name = previous ? xstrdup(previous->name.data) : NULL,
		};
		vec_push(&kernel.named, named);
	}
	for (int i = 0; i < count; i++)
		strbuf_free(&holders[i].name);
	free(holders);
	qsort(kernel.named.items, kernel.named.count, sizeof(*kernel.named.items), compare_named);
}

void symbols_kernel_names(const uint64_t *addresses, int count, const char **names)
{
	if (kernel.loaded) {
		for (int i = 0; i < count; i++) {
			struct symbol_lookup symbol;
			names[i] = symbols_kernel(addresses[i], &symbol) == 0 ? symbol.name : NULL;
		}
		return;
	}
	/* named already, as every frame of a map is once its batch is done */
	int known = 0;
	for (; known < count; known++) {
		const struct kernel_named *named = kernel_named_find(addresses[known]);
		if (!named)
			break;
		names[known] = named->name;
	}
	if (known >= count)
		return;
	uint64_t *missing = xcalloc((size_t)count + 1, sizeof(uint64_t));
	int missing_count = 0;
	for (int i = 0; i < count; i++)
		if (!kernel_named_find(addresses[i]))
			missing[missing_count++] = addresses[i];
	qsort(missing, missing_count, sizeof(uint64_t), compare_addresses);
	int unique = 0;
	for (int i = 0; i < missing_count; i++)
		if (!unique || missing[unique - 1] != missing[i])
			missing[unique++] = missing[i];
	if (unique)
		kernel_name_batch(missing, unique);
	free(missing);
	for (int i = 0; i < count; i++) {
		const struct kernel_named *named = kernel_named_find(addresses[i]);
		names[i] = named ? named->name : NULL;
	}
}

static void kernel_free(void)
{
	strbuf_free(&kernel.names);
	for (int i = 0; i < kernel.modules.count; i++)
		free(kernel.modules.items[i]);
	free(kernel.modules.items);
	memset(&kernel.modules, 0, sizeof(kernel.modules));
	free(kernel.symbols);
	kernel.symbols = NULL;
	kernel.count = 0;
	kernel.loaded = false;
	for (int i = 0; i < kernel.named.count; i++)
		free(kernel.named.items[i].name);
	free(kernel.named.items);
	memset(&kernel.named, 0, sizeof(kernel.named));
}

void symbols_set_kallsyms_path(const char *path)
{
	kernel_free();
	free(kernel.path);
	kernel.path = path ? xstrdup(path) : NULL;
}

/* ---- user objects ---- */

struct user_symbol {
	uint64_t offset; /* file offset of the first byte */
	uint64_t size;
	char *name;
	bool demangled;  /* name has been through the demangler */
};

/* One offset named by a batch: the symbol's start and name. */
struct user_named {
	uint64_t offset;
	uint64_t start;
	char *name;      /* demangled */
};

struct user_object {
	unsigned long device_major, device_minor;
	unsigned long inode;
	char *path;      /* as /proc/PID/maps shows it */
	bool loaded;
	bool reachable_checked; /* whether path is the mapped file was asked */
	bool reachable;  /* path opens the very file the process mapped */
	bool is_vdso;    /* read from sonde's own copy of the vDSO */
	struct user_symbol *symbols; /* sorted by offset */
	int count;
	/* offsets named by symbols_user_batch() without loading the table,
	 * sorted by offset; name NULL where no symbol covers the offset */
	VEC(struct user_named) named;
};

struct user_mapping {
	uint64_t start, end;  /* [start, end) in the process */
	uint64_t file_offset; /* of start */
	struct user_object *object;
};

struct user_process {
	pid_t pid;
	bool gone;            /* /proc/PID/maps could not be read the first time */
	uint64_t read_ns;     /* when the maps were last read */
	struct user_mapping *mappings;
	int count;
	struct perf_map *perf_map;   /* its /tmp/perf-PID.map, once code outside
				      * every file needed a name */
	uint64_t perf_map_read_ns;   /* when that file was last checked for growth */
};

/* how often a process's perf map is checked for new lines, at the most */
#define SYMBOLS_PERF_MAP_CHECK_NS 100000000ull

static VEC(struct user_object *) user_objects;
static VEC(struct user_process *) user_processes;
static struct user_process *user_last_process; /* consecutive frames share a pid */

/* Among symbols at one offset (aliases such as write, __write, __libc_write)
 * the plainest name: fewest leading underscores, then shortest. The vDSO's
 * functions are the exception: their plain aliases (clock_gettime) would
 * read like the C library's wrappers of the same name that call them, so
 * __vdso_clock_gettime wins there, as in perf's output. */
static int user_name_rank(const char *name)
{
	if (strncmp(name, "__vdso_", 7) == 0)
		return -1;
	int underscores = (int)strspn(name, "_");

	return underscores * 4096 + (int)strlen(name);
}

static int user_symbol_compare(const void *pa, const void *pb)
{
	const struct user_symbol *a = pa, *b = pb;

	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	int c = user_name_rank(a->name) - user_name_rank(b->name);
	if (c)
		return c;
	return strcmp(a->name, b->name);
}

/* sonde's own vDSO, which is the one every process of this kernel maps
 * (32-bit processes aside). Its section headers come last in the image,
 * which gives its size. */
static struct elf_object *user_vdso_open(void)
{
	const Elf64_Ehdr *image = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	struct elf_object *elf = NULL;
	char *error = NULL;

	if (!image || memcmp(image->e_ident, ELFMAG, SELFMAG) != 0 ||
	    image->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	uint64_t size = image->e_shoff + (uint64_t)image->e_shentsize * image->e_shnum;
	if (image->e_shoff == 0 || size > (1u << 20))
		return NULL;
	if (elf_object_open_memory(image, size, "[vdso]", &elf, &error) < 0)
		elf = NULL;
	free(error);
	return elf;
}

/* Opens the object as the process sees it: through its root (containers),
 * through the mapping itself (a file deleted or replaced since), or by its
 * path here. */
static struct elf_object *user_object_open(const struct user_object *object, pid_t pid,
					   const struct user_mapping *mapping)
{
	struct elf_object *elf = NULL;
	char *error = NULL;

	if (object->is_vdso)
		return user_vdso_open();
	char *candidates[3] = {
		xasprintf("/proc/%d/root%s", (int)pid, object->path),
		xasprintf("/proc/%d/map_files/%llx-%llx", (int)pid,
			  (unsigned long long)mapping->start, (unsigned long long)mapping->end),
		xstrdup(object->path),
	};

	for (int i = 0; i < 3 && !elf; i++) {
		if (elf_object_open(candidates[i], &elf, &error) < 0)
			elf = NULL;
		free(error);
		error = NULL;
	}
	for (int i = 0; i < 3; i++)
		free(candidates[i]);
	return elf;
}

struct user_load {
	struct user_object *object;
	struct elf_object *elf;
	int capacity;
};

static void user_load_symbol(const char *name, uint64_t address, uint64_t size, void *context)
{
	struct user_load *load = context;
	struct user_object *object = load->object;
	uint64_t offset;

	if (elf_object_address_to_offset(load->elf, address, &offset) < 0)
		return;
	if (object->count == load->capacity) {
		load->capacity = load->capacity ? load->capacity * 2 : 256;
		object->symbols = xrealloc(object->symbols,
					   sizeof(*object->symbols) * (size_t)load->capacity);
	}
	object->symbols[object->count++] = (struct user_symbol){
		.offset = offset, .size = size, .name = xstrdup(name),
	};
}

/* The whole table of the object's functions, sorted by offset; a function
 * listed in both .symtab and .dynsym is kept once. */
static void user_object_load(struct user_object *object, pid_t pid,
			     const struct user_mapping *mapping)
{
	object->loaded = true;
	struct elf_object *elf = user_object_open(object, pid, mapping);
	if (!elf)
		return;
	struct user_load load = { .object = object, .elf = elf };
	elf_object_foreach_function(elf, user_load_symbol, &load);
	elf_object_close(elf);
	if (object->count == 0)
		return;
	qsort(object->symbols, object->count, sizeof(*object->symbols), user_symbol_compare);
	int kept = 1;
	for (int i = 1; i < object->count; i++) {
		struct user_symbol *symbol = &object->symbols[i], *last = &object->symbols[kept - 1];
		if (symbol->offset == last->offset && symbol->size == last->size &&
		    strcmp(symbol->name, last->name) == 0)
			free(symbol->name);
		else
			object->symbols[kept++] = *symbol;
	}
	object->count = kept;
}

static struct user_object *user_object_get(unsigned long major, unsigned long minor,
					   unsigned long inode, const char *path)
{
	for (int i = 0; i < user_objects.count; i++) {
		struct user_object *object = user_objects.items[i];
		if (object->inode == inode && object->device_major == major &&
		    object->device_minor == minor && strcmp(object->path, path) == 0)
			return object;
	}
	struct user_object *object = xcalloc(1, sizeof(*object));
	object->device_major = major;
	object->device_minor = minor;
	object->inode = inode;
	object->path = xstrdup(path);
	vec_push(&user_objects, object);
	return object;
}

/*
 * Reads the executable file mappings of the process:
 *     55d0c4a4b000-55d0c4a4c000 r-xp 00001000 08:01 1234   /usr/bin/prog
 * Anonymous memory, [vdso] and the like have no file to read symbols from.
 * Returns false when the process is gone.
 */
static bool user_process_read_maps(struct user_process *process)
{
	proc_mapping_list mappings = { 0 };

	/* the time of the attempt, read or not: a process that has exited
	 * since must not be retried at every frame it left unnamed (89,000
	 * opens in one profile's exit) */
	process->read_ns = monotonic_ns();
	if (proc_maps_read(process->pid, &mappings) < 0)
		return false;
	free(process->mappings);
	process->mappings = NULL;
	process->count = 0;

	int capacity = 0;
	for (int i = 0; i < mappings.count; i++) {
		const struct proc_mapping *mapping = &mappings.items[i];
		bool is_vdso = strcmp(mapping->path, "[vdso]") == 0;
		if (!proc_mapping_executable(mapping) ||
		    (!is_vdso && (mapping->inode == 0 || mapping->path[0] != '/')))
			continue;
		if (process->count == capacity) {
			capacity = capacity ? capacity * 2 : 16;
			process->mappings = xrealloc(process->mappings,
						     sizeof(*process->mappings) * capacity);
		}
		process->mappings[process->count++] = (struct user_mapping){
			.start = mapping->start, .end = mapping->end, .file_offset = mapping->offset,
			.object = user_object_get(mapping->major, mapping->minor, mapping->inode,
						  mapping->path),
		};
		process->mappings[process->count - 1].object->is_vdso = is_vdso;
	}
	proc_maps_free(&mappings);
	return true;
}

static struct user_process *user_process_find(pid_t pid)
{
	if (user_last_process && user_last_process->pid == pid)
		return user_last_process;
	for (int i = 0; i < user_processes.count; i++) {
		if (user_processes.items[i]->pid == pid) {
			user_last_process = user_processes.items[i];
			return user_last_process;
		}
	}
	return NULL;
}

static struct user_process *user_process_get(pid_t pid)
{
	struct user_process *process = user_process_find(pid);
	if (process)
		return process;
	process = xcalloc(1, sizeof(*process));
	process->pid = pid;
	process->gone = !user_process_read_maps(process);
	vec_push(&user_processes, process);
	user_last_process = process;
	return process;
}

static const struct user_mapping *user_find_mapping(const struct user_process *process,
						    uint64_t address)
{
	for (int i = 0; i < process->count; i++)
		if (address >= process->mappings[i].start && address < process->mappings[i].end)
			return &process->mappings[i];
	return NULL;
}

/* Whether the object's path, opened from here, is the file the process
 * mapped (same device and inode), so its symbols can be read at any time. */
static bool user_object_reachable(struct user_object *object)
{
	struct stat file_status;

	if (!object->reachable_checked) {
		object->reachable_checked = true;
		object->reachable = !object->is_vdso && stat(object->path, &file_status) == 0 &&
				    major(file_status.st_dev) == object->device_major &&
				    minor(file_status.st_dev) == object->device_minor &&
				    file_status.st_ino == object->inode;
	}
	return object->reachable || object->is_vdso;
}

int symbols_user_prepare(pid_t pid)
{
	if (pid <= 0)
		return -ENOENT;
	struct user_process *process = user_process_find(pid);
	/* Known already: it may have exec'd since, so read the maps again (a
	 * process that is gone keeps the maps it had). */
	if (process && user_process_read_maps(process))
		process->gone = false;
	else if (!process)
		process = user_process_get(pid);
	if (process->gone)
		return -ENOENT;
	/* The mappings are what dies with the process; a file that sonde can
	 * still open by its path is read when a frame needs it. Only the others
	 * (a container's root, a deleted or replaced file) are read now. */
	for (int i = 0; i < process->count; i++) {
		struct user_object *object = process->mappings[i].object;
		if (!object->loaded && !user_object_reachable(object))
			user_object_load(object, pid, &process->mappings[i]);
	}
	return 0;
}

/* JIT code: the process's perf map, checked for new lines (one stat()) at
 * most every 100 ms, and only when one of its frames falls outside every
 * mapped file. Printing a map of stacks takes a check at its start: lines
 * written since the last print are seen, and the thousands of frames of one
 * print share that check. */
static int user_jit_lookup(struct user_process *process, uint64_t address,
			   struct symbol_lookup *out)
{
	if (!process->perf_map) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)process->pid);
		process->perf_map = perf_map_new(path);
	}
	uint64_t now = monotonic_ns();
	if (now - process->perf_map_read_ns > SYMBOLS_PERF_MAP_CHECK_NS ||
	    process->perf_map_read_ns == 0) {
		perf_map_refresh(process->perf_map);
		process->perf_map_read_ns = now;
	}
	if (perf_map_lookup(process->perf_map, address, &out->name, &out->offset) < 0)
		return -ENOENT;
	out->module = perf_map_path(process->perf_map);
	return 0;
}

/* C++ and Rust symbols ("_ZN2ns5Klass6methodEi") read as their source
 * spelled them ("ns::Klass::method(int)"); plain C names are left alone.
 * A new string either way. */
static char *user_demangled(const char *name)
{
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return xstrdup(name);
	char *plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	char *copy = xstrdup(plain ? plain : name);
	free(plain);
	return copy;
}

static void user_symbol_demangle(struct user_symbol *symbol)
{
	char *plain = user_demangled(symbol->name);

	free(symbol->name);
	symbol->name = plain;
	symbol->demangled = true;
}

static const struct user_named *user_named_find(const struct user_object *object,
						uint64_t offset)
{
	int low = 0, high = object->named.count - 1;

	while (low <= high) {
		int middle = low + (high - low) / 2;
		const struct user_named *named = &object->named.items[middle];
		if (named->offset == offset)
			return named;
		if (named->offset < offset)
			low = middle + 1;
		else
			high = middle - 1;
	}
	return NULL;
}

int symbols_user(pid_t pid, uint64_t address, struct symbol_lookup *out)
{
	if (pid <= 0)
		return -ENOENT;
	struct user_process *process = user_process_get(pid);
	if (process->gone)
		return -ENOENT;

	const struct user_mapping *mapping = user_find_mapping(process, address);
	if (!mapping && user_jit_lookup(process, address, out) == 0)
		return 0;
	/* A library loaded since the maps were read (dlopen): read them again,
	 * at most once a second so that addresses in anonymous code (JITs)
	 * do not make every lookup reread the file. */
	if (!mapping && monotonic_ns() - process->read_ns > 1000000000ull &&
	    user_process_read_maps(process))
		mapping = user_find_mapping(process, address);
	if (!mapping)
		return -ENOENT;

	struct user_object *object = mapping->object;
	uint64_t offset = address - mapping->start + mapping->file_offset;
	if (!object->loaded) {
		const struct user_named *named = user_named_find(object, offset);
		if (named) {
			if (!named->name)
				return -ENOENT;
			out->name = named->name;
			out->offset = offset - named->start;
			out->module = object->path;
			return 0;
		}
		user_object_load(object, pid, mapping);
	}

	/* the last symbol starting at or below offset, if it covers offset */
	int low = 0, high = object->count;
	while (low < high) {
		int middle = low + (high - low) / 2;
		if (object->symbols[middle].offset <= offset)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == 0)
		return -ENOENT;
	int found = low - 1;
	while (found > 0 && object->symbols[found - 1].offset == object->symbols[found].offset)
		found--;
	/* aliases share a start but not always a size: any of them may cover it */
	for (int i = found; i < object->count; i++) {
		struct user_symbol *symbol = &object->symbols[i];
		if (symbol->offset != object->symbols[found].offset)
			break;
		if (offset - symbol->offset < symbol->size) {
			if (!symbol->demangled)
				user_symbol_demangle(symbol);
			out->name = symbol->name;
			out->offset = offset - symbol->offset;
			out->module = object->path;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- many user addresses at once ---- */

/* A symbol competing to hold a wanted offset: one of the names at a start. */
struct user_alias {
	uint64_t size;
	char *name;
};

/* The highest start seen at or below one wanted offset (and above the one
 * before it), with every name at that start. */
struct user_slot {
	bool found;
	uint64_t start;
	VEC(struct user_alias) aliases;
};

struct user_batch {
	struct elf_object *elf;
	const uint64_t *offsets;  /* sorted, distinct */
	int count;
	struct user_slot *slots;  /* one per offset */
};

/* Each symbol competes only for the first wanted offset at or above its
 * start, for the reason kernel_name_batch() gives. */
static void user_batch_symbol(const char *name, uint64_t address, uint64_t size, void *context)
{
	struct user_batch *batch = context;
	uint64_t start;

	if (elf_object_address_to_offset(batch->elf, address, &start) < 0)
		return;
	int low = 0, high = batch->count;
	while (low < high) {
		int middle = low + (high - low) / 2;
		if (batch->offsets[middle] < start)
			low = middle + 1;
		else
			high = middle;
	}
	if (low == batch->count)
		return;
	struct user_slot *slot = &batch->slots[low];
	if (slot->found && start < slot->start)
		return;
	if (!slot->found || start > slot->start) {
		for (int i = 0; i < slot->aliases.count; i++)
			free(slot->aliases.items[i].name);
		slot->aliases.count = 0;
		slot->found = true;
		slot->start = start;
	}
	vec_push(&slot->aliases, ((struct user_alias){ .size = size, .name = xstrdup(name) }));
}

/* Of the names at one start, the one the whole table would answer for
 * offset: the plainest (user_symbol_compare's order) that covers it. */
static const struct user_alias *user_slot_best(const struct user_slot *slot, uint64_t offset)
{
	const struct user_alias *best = NULL;

	for (int i = 0; i < slot->aliases.count; i++) {
		const struct user_alias *alias = &slot->aliases.items[i];
		if (offset - slot->start >= alias->size)
			continue;
		int order = best ? user_name_rank(alias->name) - user_name_rank(best->name) : -1;
		if (!best || order < 0 || (order == 0 && strcmp(alias->name, best->name) < 0))
			best = alias;
	}
	return best;
}

static int compare_user_named(const void *pa, const void *pb)
{
	const struct user_named *a = pa, *b = pb;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

/* Names offsets (sorted, distinct, none named yet) of an object whose table
 * is not loaded, in one pass over its symbols that keeps only the names
 * that can hold them. */
static void user_object_name_offsets(struct user_object *object, pid_t pid,
				     const struct user_mapping *mapping, const uint64_t *offsets,
				     int count)
{
	struct user_batch batch = {
		.offsets = offsets, .count = count,
		.slots = xcalloc((size_t)count + 1, sizeof(struct user_slot)),
	};

	batch.elf = user_object_open(object, pid, mapping);
	if (batch.elf) {
		elf_object_foreach_function(batch.elf, user_batch_symbol, &batch);
		elf_object_close(batch.elf);
	}
	const struct user_slot *holder = NULL;
	for (int i = 0; i < count; i++) {
		if (batch.slots[i].found)
			holder = &batch.slots[i];
		const struct user_alias *best = holder ? user_slot_best(holder, offsets[i]) : NULL;
		struct user_named named = {
			.offset = offsets[i],
			.start = holder ? holder->start : 0,
			.name = best ? user_demangled(best->name) : NULL,
		};
		vec_push(&object->named, named);
	}
	for (int i = 0; i < count; i++) {
		for (int j = 0; j < batch.slots[i].aliases.count; j++)
			free(batch.slots[i].aliases.items[j].name);
		free(batch.slots[i].aliases.items);
	}
	free(batch.slots);
	qsort(object->named.items, (size_t)object->named.count, sizeof(*object->named.items),
	      compare_user_named);
}

/* An address of the batch, placed in its object. */
struct user_wanted {
	struct user_object *object;
	uint64_t offset;
	pid_t pid;
	struct user_mapping mapping;
};

static int compare_user_wanted(const void *pa, const void *pb)
{
	const struct user_wanted *a = pa, *b = pb;

	if (a->object != b->object)
		return (uintptr_t)a->object < (uintptr_t)b->object ? -1 : 1;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

/* Whether (pid, address) was seen before in this batch: stacks share most
 * of their frames, and the addresses are many times the distinct ones. */
static bool user_batch_seen(const struct symbols_user_address *addresses, int *seen,
			    size_t mask, int i)
{
	uint64_t hash = (addresses[i].address ^ ((uint64_t)addresses[i].pid << 40)) *
			0x9e3779b97f4a7c15ull;

	for (size_t slot = (hash >> 20) & mask;; slot = (slot + 1) & mask) {
		if (!seen[slot]) {
			seen[slot] = i + 1;
			return false;
		}
		const struct symbols_user_address *known = &addresses[seen[slot] - 1];
		if (known->pid == addresses[i].pid && known->address == addresses[i].address)
			return true;
	}
}

void symbols_user_batch(const struct symbols_user_address *addresses, int count)
{
	VEC(struct user_wanted) wanted = { 0 };
	size_t seen_size = 16;

	while (seen_size < 2 * (size_t)count)
		seen_size *= 2;
	int *seen = xcalloc(seen_size, sizeof(*seen));
	for (int i = 0; i < count; i++) {
		if (addresses[i].pid <= 0 || user_batch_seen(addresses, seen, seen_size - 1, i))
			continue;
		struct user_process *process = user_process_get(addresses[i].pid);
		const struct user_mapping *mapping = process->gone ? NULL
					: user_find_mapping(process, addresses[i].address);
		if (!mapping || mapping->object->loaded)
			continue;
		uint64_t offset = addresses[i].address - mapping->start + mapping->file_offset;
		if (user_named_find(mapping->object, offset))
			continue;
		vec_push(&wanted, ((struct user_wanted){ .object = mapping->object, .offset = offset,
							 .pid = addresses[i].pid,
							 .mapping = *mapping }));
	}
	free(seen);
	if (wanted.count)
		qsort(wanted.items, (size_t)wanted.count, sizeof(*wanted.items), compare_user_wanted);
	uint64_t *offsets = xcalloc((size_t)wanted.count + 1, sizeof(*offsets));
	for (int first = 0, next; first < wanted.count; first = next) {
		const struct user_wanted *group = &wanted.items[first];
		int unique = 0;
		for (next = first; next < wanted.count && wanted.items[next].object == group->object;
		     next++)
			if (!unique || offsets[unique - 1] != wanted.items[next].offset)
				offsets[unique++] = wanted.items[next].offset;
		user_object_name_offsets(group->object, group->pid, &group->mapping, offsets, unique);
	}
	free(offsets);
	free(wanted.items);
}

/* ---- cleanup ---- */

void symbols_free(void)
{
	kernel_free();
	for (int i = 0; i < user_objects.count; i++) {
		struct user_object *object = user_objects.items[i];
		for (int j = 0; j < object->count; j++)
			free(object->symbols[j].name);
		free(object->symbols);
		for (int j = 0; j < object->named.count; j++)
			free(object->named.items[j].name);
		free(object->named.items);
		free(object->path);
		free(object);
	}
	free(user_objects.items);
	memset(&user_objects, 0, sizeof(user_objects));
	for (int i = 0; i < user_processes.count; i++) {
		perf_map_free(user_processes.items[i]->perf_map);
		free(user_processes.items[i]->mappings);
		free(user_processes.items[i]);
	}
	free(user_processes.items);
	memset(&user_processes, 0, sizeof(user_processes));
	user_last_process = NULL;
}
