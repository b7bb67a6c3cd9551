/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libsonde-usdt: builds, at run time, the ELF shared object that a USDT
 * tracer expects to find, and fires its probes.
 *
 * A compiled USDT probe is three things: a nop in the code (where the
 * tracer puts its uprobe), a `.note.stapsdt` note saying where that nop is
 * and where each argument is when it runs, and optionally a 2-byte
 * semaphore the tracer's kernel raises while it is attached. Here each probe
 * gets a tiny function, `nop; ret`, as its site. Because the site is called
 * like any function, its arguments are in the calling convention's
 * registers (%rdi, %rsi, %rdx, %rcx, %r8, %r9) when the nop runs, and the
 * note says exactly that ("-4@%edi 8@%rsi").
 *
 * The object is written into a memfd (no file on disk) and mapped from it
 * segment by segment, as the dynamic linker would, so it appears in
 * /proc/PID/maps as "/memfd:sonde-usdt-NAME (deleted)" and tracers can
 * read its notes through /proc/PID/map_files/ and attach to it through the
 * same path.
 *
 * Unloading races with firing threads, and the disabled path (the header's
 * macro: load the probe's semaphore pointer, read through it) cannot afford
 * a lock or a counter. So an address that held the object stays readable
 * until the provider is freed: unload first points every probe at a
 * constant 0, waits for the firings already past the semaphore (they are
 * counted; they are about to take a uprobe trap, which costs far more),
 * then replaces the whole object with an anonymous read-only zero page in
 * one mmap(MAP_FIXED), which the kernel does atomically. A thread that read
 * the old semaphore pointer just before reads 0 and does not fire; there
 * is never a moment when that address is unmapped. dlopen() cannot do this
 * (dlclose unmaps), which is why the library maps the object itself; the
 * range is reused by the next load when the object fits in it, and given
 * back by free, which must not race with anything.
 * The layout, all of it computed in build_image():
 *
 *     read+exec segment   ELF header, program headers, .hash, .dynsym,
 *                         .dynstr, .stapsdt.base, .text (the sites)
 *     read+write segment  .dynamic, .probes (the semaphores)
 *     not loaded          .note.stapsdt, .shstrtab, section headers
 *
 * Each segment's file offset equals its address, so an address in a note is
 * also the file offset a uprobe (and its reference counter) is given. The
 * semaphores must be in a private writable mapping of the file, which is
 * where the kernel looks for a uprobe's reference counter.
 */
#define _GNU_SOURCE
#include "sonde/usdt.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "libsonde-usdt writes x86-64 probe sites and argument specs"
#endif

#define PAGE 4096
#define SITE_SIZE 16

typedef void (*site_function)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

struct sonde_usdt_probe {
	/* First, as struct sonde_usdt_probe_head_ in usdt.h says: the inline
	 * disabled path reads it. Points at not_loaded while unloaded. */
	const volatile uint16_t *volatile semaphore;
	site_function site;          /* NULL while unloaded; read atomically */
	struct sonde_usdt_provider *provider;
	char *name;
	int arg_count;
	enum sonde_usdt_type types[SONDE_USDT_MAX_ARGS];
	uint64_t site_address;      /* in the object, set by build_image() */
	uint64_t semaphore_address;
};

struct sonde_usdt_provider {
	char *name;
	struct sonde_usdt_probe **probes;
	int probe_count;
	int probe_capacity;
	bool loaded;
	int memfd;                  /* the object's memfd while loaded, else -1 */
	/* Address ranges that held the object: the last one holds it while
	 * loaded; all of them read as zeros otherwise, until free. */
	struct address_range { unsigned char *base; size_t size; } *ranges;
	int range_count;
	int fires_in_flight;        /* firings between their semaphore and return */
	char error[256];
};

static const volatile uint16_t not_loaded;

/* The argument registers in call order, by width: 8, 4, 2 and 1 bytes. */
static const char *const argument_registers[SONDE_USDT_MAX_ARGS][4] = {
	{ "rdi", "edi", "di", "dil" },
	{ "rsi", "esi", "si", "sil" },
	{ "rdx", "edx", "dx", "dl" },
	{ "rcx", "ecx", "cx", "cl" },
	{ "r8", "r8d", "r8w", "r8b" },
	{ "r9", "r9d", "r9w", "r9b" },
};

/* Size in bytes, negative when signed: the number before '@' in a spec. */
static int type_spec_size(enum sonde_usdt_type type)
{
	switch (type) {
	case SONDE_USDT_INT8: return -1;
	case SONDE_USDT_UINT8: return 1;
	case SONDE_USDT_INT16: return -2;
	case SONDE_USDT_UINT16: return 2;
	case SONDE_USDT_INT32: return -4;
	case SONDE_USDT_UINT32: return 4;
	case SONDE_USDT_INT64: return -8;
	case SONDE_USDT_UINT64:
	case SONDE_USDT_POINTER:
	case SONDE_USDT_STRING: return 8;
	case SONDE_USDT_NONE: break;
	}
	return 0;
}

static int fail(struct sonde_usdt_provider *provider, int err, const char *format, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sonde_usdt_provider *provider, int err, const char *format, ...)
{
	va_list ap;

	va_start(ap, format);
	vsnprintf(provider->error, sizeof(provider->error), format, ap);
	va_end(ap);
	errno = -err;
	return err;
}

/* Provider and probe names end up in notes and symbol names: C identifiers. */
static bool valid_name(const char *name)
{
	if (!name || !*name || strlen(name) > 64 || (name[0] >= '0' && name[0] <= '9'))
		return false;
	for (const char *p = name; *p; p++) {
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9')))
			return false;
	}
	return true;
}

struct sonde_usdt_provider *sonde_usdt_provider_new(const char *name)
{
	struct sonde_usdt_provider *provider;

	if (!valid_name(name)) {
		errno = EINVAL;
		return NULL;
	}
	provider = calloc(1, sizeof(*provider));
	if (!provider)
		return NULL;
	provider->memfd = -1;
	provider->name = strdup(name);
	if (!provider->name) {
		free(provider);
		return NULL;
	}
	return provider;
}

struct sonde_usdt_probe *sonde_usdt_probe_add_types(struct sonde_usdt_provider *provider,
						    const char *name,
						    const enum sonde_usdt_type *types, int count)
{
	struct sonde_usdt_probe *probe;

	if (!provider) {
		errno = EINVAL;
		return NULL;
	}
	provider->error[0] = '\0';
	if (provider->loaded) {
		fail(provider, -EBUSY, "probe %s added to provider %s after it was loaded; "
		     "add every probe before sonde_usdt_provider_load", name ? name : "(null)",
		     provider->name);
		return NULL;
	}
	if (!valid_name(name)) {
		fail(provider, -EINVAL, "probe name '%s' is not made of letters, digits and '_'",
		     name ? name : "(null)");
		return NULL;
	}
	if (count < 0 || (count > 0 && !types)) {
		fail(provider, -EINVAL, "probe %s is given %s", name,
		     count < 0 ? "a negative argument count" : "no argument types");
		return NULL;
	}
	if (count > SONDE_USDT_MAX_ARGS) {
		fail(provider, -E2BIG, "probe %s has %d arguments; at most %d are supported", name,
		     count, SONDE_USDT_MAX_ARGS);
		return NULL;
	}
	for (int i = 0; i < count; i++) {
		if (type_spec_size(types[i]) == 0) {
			fail(provider, -EINVAL, "argument %d of probe %s has no valid type (%d)", i,
			     name, (int)types[i]);
			return NULL;
		}
	}
	for (int i = 0; i < provider->probe_count; i++) {
		if (strcmp(provider->probes[i]->name, name) == 0) {
			fail(provider, -EEXIST, "provider %s already has a probe named %s",
			     provider->name, name);
			return NULL;
		}
	}
	if (provider->probe_count == provider->probe_capacity) {
		int capacity = provider->probe_capacity ? 2 * provider->probe_capacity : 8;
		void *grown = realloc(provider->probes, (size_t)capacity * sizeof(*provider->probes));
		if (!grown) {
			fail(provider, -ENOMEM, "out of memory");
			return NULL;
		}
		provider->probes = grown;
		provider->probe_capacity = capacity;
	}
	probe = calloc(1, sizeof(*probe));
	if (!probe || !(probe->name = strdup(name))) {
		free(probe);
		fail(provider, -ENOMEM, "out of memory");
		return NULL;
	}
	probe->semaphore = &not_loaded;
	probe->provider = provider;
	probe->arg_count = count;
	if (count > 0)
		memcpy(probe->types, types, (size_t)count * sizeof(*types));
	provider->probes[provider->probe_count++] = probe;
	return probe;
}

/* ---- the ELF image ---- */

/* A growable byte buffer; positions are file offsets (= addresses). */
struct image {
	unsigned char *bytes;
	size_t size;
	size_t capacity;
	bool failed;
	size_t text_end;            /* the read+exec segment is [0, text_end) */
	size_t data_start, data_end; /* the read+write one, data_start on a page */
};

static size_t image_reserve(struct image *image, size_t size, size_t align)
{
	size_t at = (image->size + align - 1) & ~(align - 1);

	if (at + size > image->capacity) {
		size_t capacity = image->capacity ? image->capacity : PAGE;
		while (capacity < at + size)
			capacity *= 2;
		unsigned char *grown = realloc(image->bytes, capacity);
		if (!grown) {
			image->failed = true;
			return 0;
		}
		memset(grown + image->capacity, 0, capacity - image->capacity);
		image->bytes = grown;
		image->capacity = capacity;
	}
	image->size = at + size;
	return at;
}

static size_t image_append(struct image *image, const void *data, size_t size, size_t align)
{
	size_t at = image_reserve(image, size, align);

	if (!image->failed)
		memcpy(image->bytes + at, data, size);
	return at;
}

static size_t image_append_string(struct image *image, const char *text)
{
	return image_append(image, text, strlen(text) + 1, 1);
}

enum section_index {
	SECTION_NULL, SECTION_HASH, SECTION_DYNSYM, SECTION_DYNSTR, SECTION_STAPSDT_BASE,
	SECTION_TEXT, SECTION_DYNAMIC, SECTION_PROBES, SECTION_NOTES, SECTION_SHSTRTAB,
	SECTION_COUNT
};

enum segment_index { SEGMENT_TEXT, SEGMENT_DATA, SEGMENT_DYNAMIC, SEGMENT_STACK, SEGMENT_COUNT };

static void set_section(Elf64_Shdr *sections, enum section_index index, uint32_t type,
			uint64_t flags, size_t offset, size_t size, uint64_t align)
{
	Elf64_Shdr *section = &sections[index];

	section->sh_type = type;
	section->sh_flags = flags;
	section->sh_offset = offset;
	section->sh_addr = (flags & SHF_ALLOC) ? offset : 0;
	section->sh_size = size;
	section->sh_addralign = align;
}

/* The argument spec of a probe's note: "-1@%dil 8@%rsi". */
static void argument_spec(const struct sonde_usdt_probe *probe, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (int i = 0; i < probe->arg_count && used < size; i++) {
		int bytes = type_spec_size(probe->types[i]);
		int width = abs(bytes);
		int column = width == 8 ? 0 : width == 4 ? 1 : width == 2 ? 2 : 3;
		used += (size_t)snprintf(out + used, size - used, "%s%d@%%%s", i ? " " : "", bytes,
					 argument_registers[i][column]);
	}
}

/* Writes .note.stapsdt: one SystemTap version 3 note per probe. */
static size_t append_notes(struct image *image, const struct sonde_usdt_provider *provider,
			   uint64_t base_address)
{
	size_t start = image_reserve(image, 0, 4);

	for (int i = 0; i < provider->probe_count; i++) {
		const struct sonde_usdt_probe *probe = provider->probes[i];
		char arguments[128];
		argument_spec(probe, arguments, sizeof(arguments));
		size_t strings = strlen(provider->name) + strlen(probe->name) + strlen(arguments) + 3;
		Elf64_Nhdr header = {
			.n_namesz = sizeof("stapsdt"),
			.n_descsz = (Elf64_Word)(3 * sizeof(uint64_t) + strings),
			.n_type = 3,
		};
		uint64_t addresses[3] = { probe->site_address, base_address,
					  probe->semaphore_address };
		image_append(image, &header, sizeof(header), 4);
		image_append(image, "stapsdt", sizeof("stapsdt"), 4);
		image_append(image, addresses, sizeof(addresses), 4);
		image_append_string(image, provider->name);
		image_append_string(image, probe->name);
		image_append_string(image, arguments);
		image_reserve(image, 0, 4);
	}
	return start;
}

/* Builds the whole object into *image; fills in each probe's addresses. */
static int build_image(const struct sonde_usdt_provider *provider, struct image *image)
{
	Elf64_Shdr sections[SECTION_COUNT] = { { 0 } };
	Elf64_Phdr segments[SEGMENT_COUNT] = { { 0 } };
	Elf64_Ehdr header;
	uint32_t symbol_count = (uint32_t)provider->probe_count + 1;
	size_t offset, names_start, text_start;

	image_reserve(image, sizeof(header) + sizeof(segments), 8);

	/* .hash: one bucket whose chain visits every symbol in order, which
	 * is a valid SysV hash table whatever the names hash to. */
	uint32_t hash_words = 2 + 1 + symbol_count;
	offset = image_reserve(image, hash_words * sizeof(uint32_t), 8);
	if (!image->failed) {
		uint32_t *words = (uint32_t *)(image->bytes + offset);
		words[0] = 1;
		words[1] = symbol_count;
		words[2] = symbol_count > 1 ? 1 : 0;
		for (uint32_t i = 1; i + 1 < symbol_count; i++)
			words[3 + i] = i + 1;
	}
	set_section(sections, SECTION_HASH, SHT_HASH, SHF_ALLOC, offset,
		    hash_words * sizeof(uint32_t), 8);

	size_t symbols_at = image_reserve(image, symbol_count * sizeof(Elf64_Sym), 8);
	set_section(sections, SECTION_DYNSYM, SHT_DYNSYM, SHF_ALLOC, symbols_at,
		    symbol_count * sizeof(Elf64_Sym), 8);

	/* .dynstr: "" then PROVIDER_NAME for each site, the names of stack frames */
	names_start = image_append(image, "", 1, 1);
	uint32_t *name_offsets = calloc((size_t)provider->probe_count + 1, sizeof(uint32_t));
	if (!name_offsets)
		return -ENOMEM;
	for (int i = 0; i < provider->probe_count; i++) {
		name_offsets[i] = (uint32_t)(image->size - names_start);
		image_append(image, provider->name, strlen(provider->name), 1);
		image_append(image, "_", 1, 1);
		image_append_string(image, provider->probes[i]->name);
	}
	set_section(sections, SECTION_DYNSTR, SHT_STRTAB, SHF_ALLOC, names_start,
		    image->size - names_start, 1);

	size_t base_at = image_append(image, "", 1, 1);
	set_section(sections, SECTION_STAPSDT_BASE, SHT_PROGBITS, SHF_ALLOC, base_at, 1, 1);

	/* .text: each site is `nop; ret`, padded with int3 */
	text_start = image_reserve(image, (size_t)provider->probe_count * SITE_SIZE, SITE_SIZE);
	for (int i = 0; i < provider->probe_count && !image->failed; i++) {
		unsigned char *site = image->bytes + text_start + (size_t)i * SITE_SIZE;
		memset(site, 0xcc, SITE_SIZE);
		site[0] = 0x90;
		site[1] = 0xc3;
		provider->probes[i]->site_address = text_start + (size_t)i * SITE_SIZE;
	}
	set_section(sections, SECTION_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_start,
		    (size_t)provider->probe_count * SITE_SIZE, SITE_SIZE);
	size_t text_end = image->size;

	if (!image->failed) {
		Elf64_Sym *symbols = (Elf64_Sym *)(image->bytes + symbols_at);
		for (int i = 0; i < provider->probe_count; i++) {
			symbols[i + 1].st_name = name_offsets[i];
			symbols[i + 1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
			symbols[i + 1].st_shndx = SECTION_TEXT;
			symbols[i + 1].st_value = provider->probes[i]->site_address;
			symbols[i + 1].st_size = 2;
		}
	}
	free(name_offsets);

	/* the writable segment starts on a page of its own */
	size_t data_start = image_reserve(image, 0, PAGE);
	Elf64_Dyn dynamic[] = {
		{ DT_HASH, { sections[SECTION_HASH].sh_addr } },
		{ DT_STRTAB, { sections[SECTION_DYNSTR].sh_addr } },
		{ DT_SYMTAB, { sections[SECTION_DYNSYM].sh_addr } },
		{ DT_STRSZ, { sections[SECTION_DYNSTR].sh_size } },
		{ DT_SYMENT, { sizeof(Elf64_Sym) } },
		{ DT_NULL, { 0 } },
	};
	size_t dynamic_at = image_append(image, dynamic, sizeof(dynamic), 8);
	set_section(sections, SECTION_DYNAMIC, SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE, dynamic_at,
		    sizeof(dynamic), 8);
	size_t probes_at = image_reserve(image, (size_t)provider->probe_count * sizeof(uint16_t), 8);
	for (int i = 0; i < provider->probe_count; i++)
		provider->probes[i]->semaphore_address = probes_at + (size_t)i * sizeof(uint16_t);
	set_section(sections, SECTION_PROBES, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, probes_at,
		    (size_t)provider->probe_count * sizeof(uint16_t), 8);
	size_t data_end = image->size;
	image->text_end = text_end;
	image->data_start = data_start;
	image->data_end = data_end;

	size_t notes_at = append_notes(image, provider, base_at);
	set_section(sections, SECTION_NOTES, SHT_NOTE, 0, notes_at, image->size - notes_at, 4);

	static const char *const section_names[SECTION_COUNT] = {
		"", ".hash", ".dynsym", ".dynstr", ".stapsdt.base", ".text", ".dynamic", ".probes",
		".note.stapsdt", ".shstrtab",
	};
	size_t shstrtab_at = image->size;
	for (int i = 0; i < SECTION_COUNT; i++)
		sections[i].sh_name = (uint32_t)(image_append_string(image, section_names[i]) -
						  shstrtab_at);
	set_section(sections, SECTION_SHSTRTAB, SHT_STRTAB, 0, shstrtab_at,
		    image->size - shstrtab_at, 1);
	sections[SECTION_HASH].sh_link = SECTION_DYNSYM;
	sections[SECTION_DYNSYM].sh_link = SECTION_DYNSTR;
	sections[SECTION_DYNSYM].sh_info = 1;
	sections[SECTION_DYNSYM].sh_entsize = sizeof(Elf64_Sym);
	sections[SECTION_DYNAMIC].sh_link = SECTION_DYNSTR;
	sections[SECTION_DYNAMIC].sh_entsize = sizeof(Elf64_Dyn);
	sections[SECTION_HASH].sh_entsize = sizeof(uint32_t);
	size_t sections_at = image_append(image, sections, sizeof(sections), 8);

	segments[SEGMENT_TEXT] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
		.p_offset = 0, .p_vaddr = 0, .p_paddr = 0, .p_filesz = text_end,
		.p_memsz = text_end, .p_align = PAGE };
	segments[SEGMENT_DATA] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_W,
		.p_offset = data_start, .p_vaddr = data_start, .p_paddr = data_start,
		.p_filesz = data_end - data_start, .p_memsz = data_end - data_start,
		.p_align = PAGE };
	segments[SEGMENT_DYNAMIC] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_flags = PF_R | PF_W,
		.p_offset = dynamic_at, .p_vaddr = dynamic_at, .p_paddr = dynamic_at,
		.p_filesz = sizeof(dynamic), .p_memsz = sizeof(dynamic), .p_align = 8 };
	/* without it the dynamic linker would make the stack executable */
	segments[SEGMENT_STACK] = (Elf64_Phdr){ .p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W,
		.p_align = 16 };

	memset(&header, 0, sizeof(header));
	memcpy(header.e_ident, ELFMAG, SELFMAG);
	header.e_ident[EI_CLASS] = ELFCLASS64;
	header.e_ident[EI_DATA] = ELFDATA2LSB;
	header.e_ident[EI_VERSION] = EV_CURRENT;
	header.e_ident[EI_OSABI] = ELFOSABI_SYSV;
	header.e_type = ET_DYN;
	header.e_machine = EM_X86_64;
	header.e_version = EV_CURRENT;
	header.e_phoff = sizeof(header);
	header.e_shoff = sections_at;
	header.e_ehsize = sizeof(header);
	header.e_phentsize = sizeof(Elf64_Phdr);
	header.e_phnum = SEGMENT_COUNT;
	header.e_shentsize = sizeof(Elf64_Shdr);
	header.e_shnum = SECTION_COUNT;
	header.e_shstrndx = SECTION_SHSTRTAB;
	if (image->failed)
		return -ENOMEM;
	memcpy(image->bytes, &header, sizeof(header));
	memcpy(image->bytes + sizeof(header), segments, sizeof(segments));
	return 0;
}

/* ---- loading ---- */

static int write_all(int fd, const unsigned char *bytes, size_t size)
{
	while (size > 0) {
		ssize_t written = write(fd, bytes, size);
		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		bytes += written;
		size -= (size_t)written;
	}
	return 0;
}

/* SONDE_USDT_DUMP=PATH: a copy of the object for readelf; PATH ending in
 * '/' is a directory that gets one sonde-usdt-PROVIDER.so per provider. */
static int dump_image(struct sonde_usdt_provider *provider, const struct image *image,
		      const char *where)
{
	char path[4096];
	size_t length = strlen(where);
	int fd, err;

	if (length > 0 && where[length - 1] == '/')
		snprintf(path, sizeof(path), "%ssonde-usdt-%s.so", where, provider->name);
	else
		snprintf(path, sizeof(path), "%s", where);
	/* a directory such as /tmp/ is shared: a link planted at the name
	 * would send a root process's write wherever it points */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(provider, -errno, "cannot write SONDE_USDT_DUMP file %s: %s", path,
			    strerror(errno));
	err = write_all(fd, image->bytes, image->size);
	close(fd);
	if (err)
		return fail(provider, err, "cannot write SONDE_USDT_DUMP file %s: %s", path,
			    strerror(-err));
	return 0;
}

static size_t page_round(size_t size)
{
	return (size + PAGE - 1) & ~(size_t)(PAGE - 1);
}

/* Makes [base, base + size) read as zeros, replacing whatever is mapped
 * there without a moment in which it is unmapped (see the top). */
static int blank_range(unsigned char *base, size_t size)
{
	if (mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
	    MAP_FAILED)
		return -errno;
	return 0;
}

/* Maps the object in the memfd at an address range of the provider's:
 * the last one if the object fits, else a new one. Sets *base. */
static int map_object(struct sonde_usdt_provider *provider, int fd, const struct image *image,
		      unsigned char **base)
{
	size_t span = page_round(image->data_end);
	struct address_range *range = provider->range_count ?
		&provider->ranges[provider->range_count - 1] : NULL;
	int err;

	if (!range || range->size < span) {
		void *grown = realloc(provider->ranges,
				      (size_t)(provider->range_count + 1) * sizeof(*provider->ranges));
		if (!grown)
			return -ENOMEM;
		provider->ranges = grown;
		void *reserved = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (reserved == MAP_FAILED)
			return -errno;
		range = &provider->ranges[provider->range_count++];
		*range = (struct address_range){ reserved, span };
	}
	/* Private and writable: the kernel raises a uprobe's semaphore only in
	 * such a mapping of the probe's file. */
	if (mmap(range->base, page_round(image->text_end), PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(range->base + image->data_start, span - image->data_start,
		 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
		 (off_t)image->data_start) == MAP_FAILED) {
		err = -errno;
		blank_range(range->base, range->size);
		return err;
	}
	*base = range->base;
	return 0;
}

int sonde_usdt_provider_load(struct sonde_usdt_provider *provider)
{
	struct image image = { 0 };
	char memfd_name[96];
	unsigned char *base = NULL;
	const char *dump;
	int fd, err;

	if (!provider)
		return -EINVAL;
	provider->error[0] = '\0';
	if (provider->loaded)
		return fail(provider, -EALREADY, "provider %s is already loaded", provider->name);
	if (provider->probe_count == 0)
		return fail(provider, -ENOENT, "provider %s has no probes to load", provider->name);
	err = build_image(provider, &image);
	if (err) {
		free(image.bytes);
		return fail(provider, err, "out of memory building provider %s", provider->name);
	}
	dump = getenv("SONDE_USDT_DUMP");
	if (dump && *dump && (err = dump_image(provider, &image, dump)) < 0) {
		free(image.bytes);
		return err;
	}

	snprintf(memfd_name, sizeof(memfd_name), "sonde-usdt-%s", provider->name);
	fd = memfd_create(memfd_name, MFD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(image.bytes);
		return fail(provider, err, "memfd_create for provider %s failed: %s",
			    provider->name, strerror(-err));
	}
	err = write_all(fd, image.bytes, image.size);
	if (!err)
		err = map_object(provider, fd, &image, &base);
	free(image.bytes);
	if (err) {
		close(fd);
		return fail(provider, err, "mapping provider %s from its memfd failed: %s",
			    provider->name, strerror(-err));
	}
	for (int i = 0; i < provider->probe_count; i++) {
		struct sonde_usdt_probe *probe = provider->probes[i];
		__atomic_store_n(&probe->site, (site_function)(base + probe->site_address),
				 __ATOMIC_SEQ_CST);
		probe->semaphore = (const volatile uint16_t *)(base + probe->semaphore_address);
	}
	/* The memfd stays open while loaded: libbcc (bpftrace, BCC's tools)
	 * finds memfd objects through the process's open descriptors. */
	provider->memfd = fd;
	provider->loaded = true;
	return 0;
}

int sonde_usdt_provider_unload(struct sonde_usdt_provider *provider)
{
	struct address_range *range;
	int err;

	if (!provider)
		return -EINVAL;
	provider->error[0] = '\0';
	if (!provider->loaded)
		return fail(provider, -EINVAL, "provider %s is not loaded", provider->name);
	/* Sequentially consistent with the counting in fire_values(): either
	 * a firing sees the site gone, or this loop sees it counted. */
	for (int i = 0; i < provider->probe_count; i++) {
		provider->probes[i]->semaphore = &not_loaded;
		__atomic_store_n(&provider->probes[i]->site, NULL, __ATOMIC_SEQ_CST);
	}
	while (__atomic_load_n(&provider->fires_in_flight, __ATOMIC_SEQ_CST) != 0)
		sched_yield();
	range = &provider->ranges[provider->range_count - 1];
	err = blank_range(range->base, range->size);
	close(provider->memfd);
	provider->memfd = -1;
	provider->loaded = false;
	if (err)
		return fail(provider, err, "unmapping provider %s failed: %s", provider->name,
			    strerror(-err));
	return 0;
}

void sonde_usdt_provider_free(struct sonde_usdt_provider *provider)
{
	if (!provider)
		return;
	if (provider->loaded)
		sonde_usdt_provider_unload(provider);
	for (int i = 0; i < provider->range_count; i++)
		munmap(provider->ranges[i].base, provider->ranges[i].size);
	for (int i = 0; i < provider->probe_count; i++) {
		free(provider->probes[i]->name);
		free(provider->probes[i]);
	}
	free(provider->ranges);
	free(provider->probes);
	free(provider->name);
	free(provider);
}

const char *sonde_usdt_provider_error(const struct sonde_usdt_provider *provider)
{
	return provider ? provider->error : "no provider";
}

/* ---- firing ---- */

/* Calls the probe's site with its arguments widened to 64 bits, counted
 * in fires_in_flight so that unload waits for it to return. Only firings
 * of enabled probes come here: the count costs little next to the uprobe
 * trap that follows, and the disabled path never touches it. */
static void fire_values(const struct sonde_usdt_probe *probe, const uint64_t values[])
{
	int *in_flight = &probe->provider->fires_in_flight;
	site_function site;

	__atomic_add_fetch(in_flight, 1, __ATOMIC_SEQ_CST);
	site = __atomic_load_n(&probe->site, __ATOMIC_SEQ_CST);
	if (site)
		site(values[0], values[1], values[2], values[3], values[4], values[5]);
	__atomic_sub_fetch(in_flight, 1, __ATOMIC_RELEASE);
}

/* (name): the functions, not the header's inline macros of the same names */
bool (sonde_usdt_probe_enabled)(const struct sonde_usdt_probe *probe)
{
	return probe && *probe->semaphore != 0;
}

int (sonde_usdt_fire)(const struct sonde_usdt_probe *probe, ...)
{
	uint64_t values[SONDE_USDT_MAX_ARGS] = { 0 };
	va_list ap;

	if (!probe)
		return -EINVAL;
	if (__builtin_expect(*probe->semaphore == 0, 1))
		return 0;
	va_start(ap, probe);
	/* Each value widened to 64 bits as its type says; the note's size
	 * tells the tracer how many of the low bytes are the value. */
	for (int i = 0; i < probe->arg_count; i++) {
		switch (probe->types[i]) {
		case SONDE_USDT_INT8:
		case SONDE_USDT_INT16:
		case SONDE_USDT_INT32:
			values[i] = (uint64_t)(int64_t)va_arg(ap, int);
			break;
		case SONDE_USDT_UINT8:
		case SONDE_USDT_UINT16:
		case SONDE_USDT_UINT32:
			values[i] = va_arg(ap, unsigned int);
			break;
		case SONDE_USDT_INT64:
			values[i] = (uint64_t)va_arg(ap, int64_t);
			break;
		case SONDE_USDT_UINT64:
			values[i] = va_arg(ap, uint64_t);
			break;
		case SONDE_USDT_POINTER:
			values[i] = (uint64_t)(uintptr_t)va_arg(ap, const void *);
			break;
		case SONDE_USDT_STRING:
			values[i] = (uint64_t)(uintptr_t)va_arg(ap, const char *);
			break;
		case SONDE_USDT_NONE:
			break;
		}
	}
	va_end(ap);
	fire_values(probe, values);
	return 0;
}

void *sonde_usdt_probe_site(const struct sonde_usdt_probe *probe)
{
	return probe ? (void *)__atomic_load_n(&probe->site, __ATOMIC_SEQ_CST) : NULL;
}

const volatile uint16_t *sonde_usdt_probe_semaphore(const struct sonde_usdt_probe *probe)
{
	return probe && probe->provider->loaded ? probe->semaphore : NULL;
}
