/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ELF reading for user-space probes: function symbols, address → file
 * offset, USDT notes, and finding a library or executable by name. See
 * elf.h for what each piece is for.
 *
 * libelf does the parsing. Files are opened with ELF_C_READ_MMAP, so a
 * large library (libc, a browser) costs page faults for the parts read,
 * not a copy of the whole file.
 *
 * The ld.so.cache reader follows the file format glibc writes: the "new"
 * format ("glibc-ld.so.cache1.1": a header, fixed-size entries, string
 * offsets counted from the start of the file), possibly preceded by the
 * "old" format ("ld.so-1.7.0"), which glibc stopped writing by default in
 * 2.32 but older systems still have.
 */
#include "elf.h"
#include "procmaps.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A PT_LOAD segment: link-time addresses [address, address + size) are at
 * file offsets from offset. */
struct elf_segment {
	uint64_t address, size, offset;
};

struct elf_object {
	char *path;
	int fd;            /* -1 for an image read from memory */
	void *image;       /* that image's copy, which libelf reads in place */
	Elf *elf;
	GElf_Ehdr header;
	/* the PT_LOAD segments, read at the first address_to_offset: a symbol
	 * table converts tens of thousands of addresses */
	struct elf_segment *segments;
	int segment_count; /* -1 until read */
	bool releasable;   /* the image is libelf's read-only mapping of the file */
};

static bool libelf_ready(void)
{
	static int state; /* 0 unknown, 1 ready, -1 unusable */

	if (state == 0)
		state = elf_version(EV_CURRENT) == EV_NONE ? -1 : 1;
	return state > 0;
}

/*
 * Whether libelf read the file by mapping it whole (it falls back to a
 * malloc'd copy when it cannot), told by the mapping sonde's maps list at
 * the image's address: the file's inode at offset 0.
 */
static bool elf_image_is_file_mapping(const struct elf_object *object, const struct stat *st)
{
	size_t size;
	char *image = elf_rawfile(object->elf, &size);
	proc_mapping_list maps = { 0 };
	bool found = false;

	if (!image || st->st_ino == 0 || proc_maps_read(0, &maps) < 0)
		return false;
	for (int i = 0; i < maps.count && !found; i++)
		found = maps.items[i].start == (uintptr_t)image && maps.items[i].offset == 0 &&
			maps.items[i].inode == st->st_ino;
	proc_maps_free(&maps);
	return found;
}

int elf_object_open(const char *path, struct elf_object **out, char **error)
{
	struct elf_object *object;
	struct stat st = { 0 };
	int fd, err;

	*out = NULL;
	if (!libelf_ready()) {
		*error = xasprintf("libelf is unusable: %s", elf_errmsg(-1));
		return -ENOTSUP;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		*error = xasprintf("cannot open %s: %s", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		close(fd);
		*error = xasprintf("%s is not a regular file", path);
		return -EINVAL;
	}
	object = xcalloc(1, sizeof(*object));
	object->fd = fd;
	object->segment_count = -1;
	object->path = xstrdup(path);
	object->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!object->elf || elf_kind(object->elf) != ELF_K_ELF ||
	    !gelf_getehdr(object->elf, &object->header)) {
		*error = xasprintf("%s is not an ELF file", path);
		elf_object_close(object);
		return -ENOEXEC;
	}
	if (object->header.e_type != ET_EXEC && object->header.e_type != ET_DYN) {
		*error = xasprintf("%s is not an executable or a shared library", path);
		elf_object_close(object);
		return -ENOEXEC;
	}
	object->releasable = elf_image_is_file_mapping(object, &st);
	*out = object;
	return 0;
}

int elf_object_open_memory(const void *image, size_t size, const char *name,
			   struct elf_object **out, char **error)
{
	struct elf_object *object;

	*out = NULL;
	if (!libelf_ready()) {
		*error = xasprintf("libelf is unusable: %s", elf_errmsg(-1));
		return -ENOTSUP;
	}
	object = xcalloc(1, sizeof(*object));
	object->fd = -1;
	object->segment_count = -1;
	object->path = xstrdup(name);
	object->image = xmalloc(size);
	memcpy(object->image, image, size);
	object->elf = elf_memory(object->image, size);
	if (!object->elf || elf_kind(object->elf) != ELF_K_ELF ||
	    !gelf_getehdr(object->elf, &object->header)) {
		*error = xasprintf("%s is not an ELF image", name);
		elf_object_close(object);
		return -ENOEXEC;
	}
	*out = object;
	return 0;
}

void elf_object_close(struct elf_object *object)
{
	if (!object)
		return;
	if (object->elf)
		elf_end(object->elf);
	if (object->fd >= 0)
		close(object->fd);
	free(object->image);
	free(object->segments);
	free(object->path);
	free(object);
}

bool elf_object_is_relocatable(const struct elf_object *object)
{
	return object->header.e_type == ET_DYN;
}

/* ---- symbols ---- */

static bool is_function(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_size > 0;
}

/*
 * Calls visit for every defined symbol in .symtab, then .dynsym; stops
 * early when visit returns true. A stripped binary simply has no .symtab.
 */
/* Symbols read between two releases of the file's pages (below). */
#define ELF_SYMBOLS_PER_RELEASE 4096

/*
 * Gives back the pages of a mapped file read so far. The symbol and string
 * tables of a big library (LLVM's, a browser's) are megabytes; read through
 * the mapping they would all count in sonde's resident memory until the
 * file is closed. They are only read, so dropping them costs nothing but a
 * page cache lookup if one is needed again.
 */
static void elf_release_pages(const struct elf_object *object)
{
	size_t size;
	char *image = object->releasable ? elf_rawfile(object->elf, &size) : NULL;

	if (image)
		madvise(image, size, MADV_DONTNEED);
}

static void foreach_symbol(struct elf_object *object,
			   bool (*visit)(const GElf_Sym *sym, const char *name, void *context),
			   void *context)
{
	const Elf64_Word table_types[] = { SHT_SYMTAB, SHT_DYNSYM };
	size_t read = 0;

	for (size_t t = 0; t < 2; t++) {
		Elf_Scn *section = NULL;
		while ((section = elf_nextscn(object->elf, section))) {
			GElf_Shdr shdr;
			Elf_Data *data;

			if (!gelf_getshdr(section, &shdr) || shdr.sh_type != table_types[t] ||
			    shdr.sh_entsize == 0)
				continue;
			data = elf_getdata(section, NULL);
			if (!data)
				continue;
			size_t count = shdr.sh_size / shdr.sh_entsize;
			for (size_t i = 0; i < count; i++) {
				GElf_Sym sym;
				const char *name;

				if (++read % ELF_SYMBOLS_PER_RELEASE == 0)
					elf_release_pages(object);
				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				name = elf_strptr(object->elf, shdr.sh_link, sym.st_name);
				if (!name || !name[0])
					continue;
				if (visit(&sym, name, context)) {
					elf_release_pages(object);
					return;
				}
			}
		}
	}
	elf_release_pages(object);
}

struct function_visitor {
	elf_function_visit visit;
	void *context;
};

static bool visit_function(const GElf_Sym *sym, const char *name, void *context)
{
	const struct function_visitor *visitor = context;

	if (is_function(sym))
		visitor->visit(name, sym->st_value, sym->st_size, visitor->context);
	return false;
}

static void collect_function(const char *name, uint64_t address, uint64_t size, void *context)
{
	elf_symbol_list *out = context;

	/* Most functions are in both tables; elf_object_functions drops the
	 * repeats after sorting. */
	struct elf_symbol symbol = { xstrdup(name), address, size };
	vec_push(out, symbol);
}

static int compare_symbols(const void *a, const void *b)
{
	const struct elf_symbol *left = a, *right = b;
	int order = strcmp(left->name, right->name);

	if (order)
		return order;
	/* equal names (a static function in two files): lowest address first */
	if (left->address != right->address)
		return left->address < right->address ? -1 : 1;
	return (left->size < right->size) ? -1 : (left->size > right->size);
}

static bool has_symtab(struct elf_object *object)
{
	Elf_Scn *section = NULL;
	GElf_Shdr shdr;

	while ((section = elf_nextscn(object->elf, section))) {
		if (gelf_getshdr(section, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	}
	return false;
}

#define NOTE_GNU_BUILD_ID 3

/*
 * The separate debug file of a stripped object, found by its build ID the
 * way gdb does: /usr/lib/debug/.build-id/AB/CDEF....debug. Distributions
 * install these with -dbg/-dbgsym packages; their .symtab has the static
 * functions the stripped object lost, at the same addresses.
 */
static struct elf_object *open_debug_file(struct elf_object *object)
{
	Elf_Scn *section = NULL;
	GElf_Shdr shdr;

	while ((section = elf_nextscn(object->elf, section))) {
		Elf_Data *data;
		GElf_Nhdr nhdr;
		size_t offset = 0, name_offset, desc_offset;

		if (!gelf_getshdr(section, &shdr) || shdr.sh_type != SHT_NOTE ||
		    !(data = elf_getdata(section, NULL)))
			continue;
		while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
			const unsigned char *id = (const unsigned char *)data->d_buf + desc_offset;
			struct strbuf path;
			struct elf_object *debug = NULL;
			char *error = NULL;

			if (nhdr.n_type != NOTE_GNU_BUILD_ID || nhdr.n_namesz != 4 ||
			    memcmp((const char *)data->d_buf + name_offset, "GNU", 4) != 0 ||
			    nhdr.n_descsz < 2)
				continue;
			strbuf_init(&path);
			strbuf_printf(&path, "/usr/lib/debug/.build-id/%02x/", id[0]);
			for (size_t i = 1; i < nhdr.n_descsz; i++)
				strbuf_printf(&path, "%02x", id[i]);
			strbuf_puts(&path, ".debug");
			if (access(path.data, R_OK) == 0 && elf_object_open(path.data, &debug, &error) < 0)
				debug = NULL;
			free(error);
			strbuf_free(&path);
			return debug;
		}
	}
	return NULL;
}

void elf_object_foreach_function(struct elf_object *object, elf_function_visit visit,
				 void *context)
{
	struct function_visitor visitor = { visit, context };

	foreach_symbol(object, visit_function, &visitor);
	if (!has_symtab(object)) {
		struct elf_object *debug = open_debug_file(object);
		if (debug) {
			foreach_symbol(debug, visit_function, &visitor);
			elf_object_close(debug);
		}
	}
}

int elf_object_functions(struct elf_object *object, elf_symbol_list *out)
{
	int first = out->count;

	elf_object_foreach_function(object, collect_function, out);
	/* Sort this object's symbols by name and drop repeated names. */
	int count = out->count - first, kept = 0;

	if (count <= 0)
		return 0; /* (and items may be NULL: no pointer arithmetic on it) */
	struct elf_symbol *mine = out->items + first;
	qsort(mine, (size_t)count, sizeof(*mine), compare_symbols);
	for (int i = 0; i < count; i++) {
		if (kept > 0 && strcmp(mine[kept - 1].name, mine[i].name) == 0) {
			free(mine[i].name);
			continue;
		}
		mine[kept++] = mine[i];
	}
	out->count = first + kept;
	return 0;
}

struct symbol_finder {
	const char *name;
	struct elf_symbol *out;
	bool found;
};

static bool find_symbol(const GElf_Sym *sym, const char *name, void *context)
{
	struct symbol_finder *finder = context;

	if (strcmp(name, finder->name) != 0)
		return false;
	finder->out->name = NULL;
	finder->out->address = sym->st_value;
	finder->out->size = sym->st_size;
	finder->found = true;
	return true;
}

int elf_object_find_symbol(struct elf_object *object, const char *name, struct elf_symbol *out)
{
	struct symbol_finder finder = { name, out, false };

	foreach_symbol(object, find_symbol, &finder);
	return finder.found ? 0 : -ENOENT;
}

static void elf_read_segments(struct elf_object *object)
{
	size_t count;

	object->segment_count = 0;
	if (elf_getphdrnum(object->elf, &count) != 0 || count == 0)
		return;
	object->segments = xcalloc(count, sizeof(*object->segments));
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (!gelf_getphdr(object->elf, (int)i, &phdr) || phdr.p_type != PT_LOAD)
			continue;
		object->segments[object->segment_count++] = (struct elf_segment){
			.address = phdr.p_vaddr, .size = phdr.p_memsz, .offset = phdr.p_offset,
		};
	}
}

/* Through the loadable segments: a link-time address to the file offset
 * that holds it, or (to_address) an offset to its address. */
static int segment_translate(struct elf_object *object, uint64_t from, bool to_address, uint64_t *to)
{
	if (object->segment_count < 0)
		elf_read_segments(object);
	for (int i = 0; i < object->segment_count; i++) {
		const struct elf_segment *segment = &object->segments[i];
		uint64_t start = to_address ? segment->offset : segment->address;

		if (from >= start && from - start < segment->size) {
			*to = from - start + (to_address ? segment->address : segment->offset);
			return 0;
		}
	}
	return -ENOENT;
}

int elf_object_address_to_offset(struct elf_object *object, uint64_t address, uint64_t *offset)
{
	return segment_translate(object, address, false, offset);
}

int elf_object_offset_to_address(struct elf_object *object, uint64_t offset, uint64_t *address)
{
	return segment_translate(object, offset, true, address);
}

bool elf_object_address_is_code(const struct elf_object *object, uint64_t address)
{
	size_t count;

	if (elf_getphdrnum(object->elf, &count) != 0)
		return false;
	for (size_t i = 0; i < count; i++) {
		GElf_Phdr phdr;

		if (gelf_getphdr(object->elf, (int)i, &phdr) && phdr.p_type == PT_LOAD &&
		    (phdr.p_flags & PF_X) && address >= phdr.p_vaddr &&
		    address < phdr.p_vaddr + phdr.p_filesz)
			return true;
	}
	return false;
}

/* ---- USDT notes ---- */

static Elf_Scn *find_section(struct elf_object *object, const char *wanted, GElf_Shdr *shdr)
{
	size_t names_index;
	Elf_Scn *section = NULL;

	if (elf_getshdrstrndx(object->elf, &names_index) != 0)
		return NULL;
	while ((section = elf_nextscn(object->elf, section))) {
		const char *name;

		if (!gelf_getshdr(section, shdr))
			continue;
		name = elf_strptr(object->elf, names_index, shdr->sh_name);
		if (name && strcmp(name, wanted) == 0)
			return section;
	}
	return NULL;
}

/* An address stored in a note's descriptor, 4 or 8 bytes little-endian. */
static uint64_t note_address(const unsigned char *bytes, size_t width)
{
	uint64_t value = 0;

	for (size_t i = 0; i < width; i++)
		value |= (uint64_t)bytes[i] << (8 * i);
	return value;
}

#define STAPSDT_NOTE_TYPE 3

int elf_object_stapsdt_notes(struct elf_object *object, stapsdt_note_list *out)
{
	GElf_Shdr shdr, base_shdr;
	Elf_Scn *section = find_section(object, ".note.stapsdt", &shdr);
	bool has_base = find_section(object, ".stapsdt.base", &base_shdr) != NULL;
	size_t width = gelf_getclass(object->elf) == ELFCLASS32 ? 4 : 8;
	Elf_Data *data;

	if (!section || shdr.sh_type != SHT_NOTE)
		return 0;
	data = elf_getdata(section, NULL);
	if (!data)
		return -EINVAL;
	size_t offset = 0, name_offset, desc_offset;
	GElf_Nhdr nhdr;
	while ((offset = gelf_getnote(data, offset, &nhdr, &name_offset, &desc_offset)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_offset;
		const char *owner = (const char *)data->d_buf + name_offset;
		const char *strings, *end;
		struct stapsdt_note note = { 0 };

		if (nhdr.n_type != STAPSDT_NOTE_TYPE || nhdr.n_namesz != sizeof("stapsdt") ||
		    memcmp(owner, "stapsdt", sizeof("stapsdt")) != 0 || nhdr.n_descsz < 3 * width)
			continue;
		note.pc = note_address(desc, width);
		note.base = note_address(desc + width, width);
		note.semaphore = note_address(desc + 2 * width, width);
		/* provider\0name\0arguments\0, all within the descriptor */
		strings = (const char *)desc + 3 * width;
		end = (const char *)desc + nhdr.n_descsz;
		const char *fields[3] = { NULL, NULL, NULL };
		const char *p = strings;
		for (int i = 0; i < 3 && p < end; i++) {
			const char *nul = memchr(p, '\0', (size_t)(end - p));
			if (!nul)
				break;
			fields[i] = p;
			p = nul + 1;
		}
		if (!fields[0] || !fields[1])
			continue;
		/* The note holds where .stapsdt.base was at link time; if the
		 * object has since been moved (prelink), the section's address
		 * now differs by exactly the amount the probes moved. */
		if (has_base && note.base) {
			note.pc += base_shdr.sh_addr - note.base;
			if (note.semaphore)
				note.semaphore += base_shdr.sh_addr - note.base;
		}
		note.provider = xstrdup(fields[0]);
		note.name = xstrdup(fields[1]);
		note.arguments = xstrdup(fields[2] ? fields[2] : "");
		vec_push(out, note);
	}
	return 0;
}

void elf_symbol_list_free(elf_symbol_list *list)
{
	for (int i = 0; i < list->count; i++)
		free(list->items[i].name);
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

void stapsdt_note_list_free(stapsdt_note_list *list)
{
	for (int i = 0; i < list->count; i++) {
		free(list->items[i].provider);
		free(list->items[i].name);
		free(list->items[i].arguments);
	}
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

void path_list_free(path_list *list)
{
	for (int i = 0; i < list->count; i++)
		free(list->items[i]);
	free(list->items);
	list->items = NULL;
	list->count = list->capacity = 0;
}

/* ---- ld.so.cache ---- */

#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_NEW_MAGIC "glibc-ld.so.cache"
#define CACHE_NEW_VERSION "1.1"

/* Entry flags: the low byte is the kind of library, the high byte the
 * machine it needs. x86-64 libc6 libraries are ELF_LIBC6 | X8664_LIB64. */
#define CACHE_FLAG_TYPE_MASK 0x00ff
#define CACHE_FLAG_ELF_LIBC6 0x0003
#define CACHE_FLAG_REQUIRED_MASK 0xff00
#define CACHE_FLAG_X8664_LIB64 0x0300

#define CACHE_OLD_HEADER_SIZE 16  /* magic[11] padded to 12, uint32 count */
#define CACHE_OLD_ENTRY_SIZE 12   /* int32 flags, uint32 key, uint32 value */
#define CACHE_NEW_HEADER_SIZE 48  /* magic+version[20], count, string bytes, flags..., unused[3] */
#define CACHE_NEW_ENTRY_SIZE 24   /* int32 flags, uint32 key, value, osversion, uint64 hwcap */

static uint32_t read_u32(const unsigned char *bytes)
{
	uint32_t value;

	memcpy(&value, bytes, sizeof(value));
	return value;
}

/* The string at offset in data, or NULL if it does not end inside data. */
static const char *cache_string(const unsigned char *data, size_t length, uint32_t offset)
{
	if (offset >= length || !memchr(data + offset, '\0', length - offset))
		return NULL;
	return (const char *)data + offset;
}

static bool library_name_matches(const char *key, const char *name)
{
	size_t length = strlen(name);

	if (strcmp(key, name) == 0)
		return true;
	return strncmp(key, name, length) == 0 && strncmp(key + length, ".so", 3) == 0;
}

int elf_ld_cache_lookup(const void *data_in, size_t length, const char *name, char **path)
{
	const unsigned char *data = data_in;
	size_t start = 0;

	if (length >= CACHE_OLD_HEADER_SIZE && memcmp(data, CACHE_OLD_MAGIC, 11) == 0) {
		/* The new format, if present, follows the old table aligned to 8. */
		uint64_t old_count = read_u32(data + 12);
		start = CACHE_OLD_HEADER_SIZE + old_count * CACHE_OLD_ENTRY_SIZE;
		start = (start + 7) & ~(size_t)7;
	}
	if (start + CACHE_NEW_HEADER_SIZE > length ||
	    memcmp(data + start, CACHE_NEW_MAGIC CACHE_NEW_VERSION, 20) != 0)
		return -EINVAL;
	uint64_t count = read_u32(data + start + 20);
	if (count > (length - start - CACHE_NEW_HEADER_SIZE) / CACHE_NEW_ENTRY_SIZE)
		return -EINVAL;
	/* New-format string offsets count from the new header, which is the
	 * start of the file unless an old-format table comes first. */
	const unsigned char *strings_base = data + start;
	size_t strings_length = length - start;
	/* Entries with hwcaps (glibc-hwcaps/x86-64-v3/...) are builds for
	 * particular CPU levels; the plain build is the one every process can
	 * load, so the first pass takes only that and the second anything. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < count; i++) {
			const unsigned char *entry =
				data + start + CACHE_NEW_HEADER_SIZE + i * CACHE_NEW_ENTRY_SIZE;
			uint32_t flags = read_u32(entry);
			uint64_t hwcap = read_u32(entry + 16) | (uint64_t)read_u32(entry + 20) << 32;
			const char *key = cache_string(strings_base, strings_length,
						       read_u32(entry + 4));
			const char *value = cache_string(strings_base, strings_length,
							 read_u32(entry + 8));

			if ((flags & CACHE_FLAG_TYPE_MASK) != CACHE_FLAG_ELF_LIBC6 ||
			    (flags & CACHE_FLAG_REQUIRED_MASK) != CACHE_FLAG_X8664_LIB64 ||
			    (pass == 0 && hwcap != 0))
				continue;
			if (key && value && library_name_matches(key, name)) {
				*path = xstrdup(value);
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* ---- finding objects ---- */

static bool is_readable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

static const char *const library_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
	"/lib", "/usr/lib", "/usr/local/lib", NULL,
};

/* NAME.so* in one directory, as the linker would pick: NAME.so first,
 * otherwise the first versioned name in directory order. */
static char *library_in_dir(const char *dir, const char *name)
{
	char *exact = xasprintf("%s/%s.so", dir, name);
	DIR *handle;
	struct dirent *entry;
	char *found = NULL;

	if (is_readable_file(exact))
		return exact;
	free(exact);
	handle = opendir(dir);
	if (!handle)
		return NULL;
	while (!found && (entry = readdir(handle))) {
		if (library_name_matches(entry->d_name, name) && strcmp(entry->d_name, name) != 0) {
			char *candidate = xasprintf("%s/%s", dir, entry->d_name);
			if (is_readable_file(candidate))
				found = candidate;
			else
				free(candidate);
		}
	}
	closedir(handle);
	return found;
}

static int resolve_library(const char *name, char **path)
{
	size_t length;
	char *cache = read_file("/etc/ld.so.cache", &length);
	int err = -ENOENT;

	if (cache) {
		err = elf_ld_cache_lookup(cache, length, name, path);
		free(cache);
		if (err == 0)
			return 0;
	}
	for (const char *const *dir = library_dirs; *dir; dir++) {
		char *found = library_in_dir(*dir, name);
		if (found) {
			*path = found;
			return 0;
		}
	}
	return -ENOENT;
}

/* The prefix that makes pid's paths openable here: "" when it shares our root. */
static char *process_root(pid_t pid)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n == 1 && target[0] == '/')
		return xstrdup("");
	return xstrdup(link);
}

/*
 * An object built in memory and mapped from a memfd (libsonde-usdt's
 * providers, JIT runtimes) shows in maps as "/memfd:NAME (deleted)": no
 * path names it, but /proc/PID/map_files/START-END opens the very file
 * behind the mapping (root only), and the kernel accepts that path for a
 * uprobe too, since it resolves it to the memfd's inode. Any one mapping of
 * the file will do; the executable one is used.
 */
int elf_process_objects(pid_t pid, path_list *out)
{
	proc_mapping_list maps = { 0 };
	path_list memfd_inodes = { 0 }; /* "DEV INODE" of the memfds already added */
	int err = proc_maps_read(pid, &maps);

	if (err)
		return err;
	char *root = process_root(pid);
	for (int i = 0; i < maps.count; i++) {
		const struct proc_mapping *mapping = &maps.items[i];
		const char *file = mapping->path;
		bool seen = false;

		if (!proc_mapping_executable(mapping) || file[0] != '/')
			continue;
		if (strncmp(file, "/memfd:", 7) == 0) {
			char *identity = xasprintf("%lx:%lx %lu", mapping->major, mapping->minor,
						   mapping->inode);
			for (int j = 0; j < memfd_inodes.count && !seen; j++)
				seen = strcmp(memfd_inodes.items[j], identity) == 0;
			if (seen) {
				free(identity);
				continue;
			}
			vec_push(&memfd_inodes, identity);
			/* map_files/ names a mapping by its range, printed %lx-%lx */
			vec_push(out, xasprintf("/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
						mapping->start, mapping->end));
			continue;
		}
		if (strstr(file, " (deleted)"))
			continue;
		char *full = xasprintf("%s%s", root, file);
		for (int j = 0; j < out->count && !seen; j++)
			seen = strcmp(out->items[j], full) == 0;
		if (seen)
			free(full);
		else
			vec_push(out, full);
	}
	path_list_free(&memfd_inodes);
	free(root);
	proc_maps_free(&maps);
	return 0;
}

/* A library named like "libc" mapped into pid: ".../libc.so.6", ".../libc-2.31.so". */
static int resolve_in_process(const char *name, pid_t pid, char **path)
{
	path_list objects = { 0 };
	int err = elf_process_objects(pid, &objects);
	size_t length = strlen(name);

	if (err)
		return err;
	err = -ENOENT;
	for (int i = 0; i < objects.count && err; i++) {
		const char *slash = strrchr(objects.items[i], '/');
		const char *base = slash ? slash + 1 : objects.items[i];
		if (strncmp(base, name, length) == 0 &&
		    (strncmp(base + length, ".so", 3) == 0 || base[length] == '-')) {
			*path = xstrdup(objects.items[i]);
			err = 0;
		}
	}
	path_list_free(&objects);
	return err;
}

static int resolve_on_path(const char *name, char **path)
{
	const char *search = getenv("PATH");
	char *copy, *dir, *save = NULL;
	int err = -ENOENT;

	if (!search || !*search)
		search = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
	copy = xstrdup(search);
	for (dir = strtok_r(copy, ":", &save); dir && err; dir = strtok_r(NULL, ":", &save)) {
		char *candidate = xasprintf("%s/%s", dir, name);
		if (is_readable_file(candidate) && access(candidate, X_OK) == 0) {
			*path = candidate;
			err = 0;
		} else {
			free(candidate);
		}
	}
	free(copy);
	return err;
}

int elf_resolve_binary(const char *name, pid_t pid, char **path)
{
	if (strchr(name, '/')) {
		if (!is_readable_file(name))
			return -ENOENT;
		*path = xstrdup(name);
		return 0;
	}
	if (pid > 0 && resolve_in_process(name, pid, path) == 0)
		return 0;
	if (resolve_library(name, path) == 0)
		return 0;
	if (resolve_on_path(name, path) == 0)
		return 0;
	/* BCC's shorthand, last so that a program of that name wins: "c" is
	 * libc, "pthread" libpthread */
	char *prefixed = xasprintf("lib%s", name);
	int err = resolve_library(prefixed, path);
	if (err < 0 && pid > 0)
		err = resolve_in_process(prefixed, pid, path);
	free(prefixed);
	return err;
}
