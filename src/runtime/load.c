/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The loader: turns the compiler's struct program into kernel objects.
 *
 * It creates every map the program describes, then gives each probe program
 * to the verifier. The compiler cannot know map fds, so it refers to maps by
 * id: a BPF_LD_IMM64 with src_reg BPF_PSEUDO_MAP_FD (or _MAP_VALUE) whose imm
 * is the index into program->maps. The loader patches a copy of the
 * instructions with the real fds just before BPF_PROG_LOAD.
 *
 * Loading first happens without a verifier log (the log costs time on big
 * programs). When the verifier says no, the load is repeated with a log,
 * and the log's last instruction line ("NN: (85) call ...") names the
 * instruction it stopped at. The compiler recorded the source location of
 * every instruction, so the user is shown the line of their program that
 * produced it, the verifier's last words, and which probe it was.
 *
 * Errors are printed here rather than returned as codes: each failure has a
 * different useful sentence, and run.c only needs to know "it failed".
 */
#include "runtime/load.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/diag.h"
#include "kernel/features.h"
#include "kernel/pinned.h"
#include "runtime/func_info.h"

/* Big enough for the full level-1 log of almost any program; kernels
 * before 6.4 keep the head of a log that does not fit, losing the error. */
#define LOAD_LOG_SIZE (16u << 20)
#define LOAD_STATS_LOG_SIZE (64u << 10)
#define LOAD_LOG_TAIL_LINES 10

static const char load_root_message[] = FEATURES_ROOT_MESSAGE "\n";

int load_ringbuf_size(uint32_t configured, uint32_t *size, char **error)
{
	const char *text = getenv("SONDE_RINGBUF_SIZE");
	unsigned long long value;
	long page_size = sysconf(_SC_PAGESIZE);
	char *end;

	*size = configured ? configured : LOAD_RINGBUF_SIZE_DEFAULT;
	if (!text || !*text)
		return 0;
	/* strtoull would also take " 64", "+64" and "-64" */
	if (!isdigit((unsigned char)text[0]))
		goto invalid;
	errno = 0;
	value = strtoull(text, &end, 0);
	if (errno || end == text)
		goto invalid;
	if (*end == 'k' || *end == 'K') {
		value <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		value <<= 20;
		end++;
	}
	if (*end)
		goto invalid;
	if (page_size <= 0)
		page_size = 4096;
	if (value < (unsigned long long)page_size || value > (1ull << 30) ||
	    (value & (value - 1)) != 0) {
		*error = xasprintf("SONDE_RINGBUF_SIZE must be a power of two between %ld and %llu "
				   "bytes, not %s",
				   page_size, 1ull << 30, text);
		return -1;
	}
	*size = (uint32_t)value;
	return 0;
invalid:
	*error = xasprintf("SONDE_RINGBUF_SIZE must be a number of bytes (k and m suffixes "
			   "allowed), not '%s'",
			   text);
	return -1;
}

/*
 * Kernel object names are at most 15 characters of [A-Za-z0-9_.]. Programs
 * are prefixed "sonde_" so that bpftool shows whose they are; maps keep
 * their program name with '@' spelled "AT_" (as bpftrace does).
 */
static void load_object_name(char *name, size_t size, const char *prefix, const char *text)
{
	size_t length = 0;

	for (; *prefix && length + 1 < size; prefix++)
		name[length++] = *prefix;
	for (; *text && length + 1 < size; text++) {
		unsigned char c = (unsigned char)*text;

		if (c == '@') {
			const char *at = "AT_";

			for (; *at && length + 1 < size; at++)
				name[length++] = *at;
			continue;
		}
		name[length++] = isalnum(c) || c == '_' || c == '.' ? (char)c : '_';
	}
	name[length] = '\0';
}

static const char *load_map_kind(uint32_t type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
		return "hash";
	case BPF_MAP_TYPE_PERCPU_HASH:
		return "per-CPU hash";
	case BPF_MAP_TYPE_LRU_HASH:
		return "LRU hash";
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return "per-CPU LRU hash";
	case BPF_MAP_TYPE_ARRAY:
		return "array";
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return "per-CPU array";
	case BPF_MAP_TYPE_RINGBUF:
		return "ring buffer";
	case BPF_MAP_TYPE_STACK_TRACE:
		return "stack trace";
	default:
		return "map";
	}
}

/* A hash map whose elements would take this many bytes or more is
 * allocated as it fills rather than all at once: execsnoop's 4,096
 * argument buffers of 2.5 KB each cost 10 MB of zeroed kernel memory and
 * some 20 ms of start-up when preallocated, for a map that holds a few
 * entries at any moment. Smaller maps keep preallocation, the cheapest
 * per update. */
#define LOAD_ON_DEMAND_BYTES (1u << 20)

static uint32_t load_map_flags(const struct map_desc *map)
{
	if (map->role == MAP_ROLE_TABLE)
		return BPF_F_RDONLY_PROG; /* programs only read a table */
	uint64_t bytes = ((uint64_t)map->key_size + map->value_size) * map->max_entries;

	if ((map->bpf_map_type == BPF_MAP_TYPE_HASH || map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH) &&
	    bytes >= LOAD_ON_DEMAND_BYTES && feature_has_hash_on_demand())
		return BPF_F_NO_PREALLOC;
	return 0;
}

/*
 * Which maps some program's instructions name. A hash map that none does
 * stays empty for the whole run: only programs add elements (user space
 * reads, zeroes the keys there are, deletes). A tool's option that is off
 * leaves such maps behind (biolatency's per-disk and per-flag histograms,
 * printed and cleared from user space but never filled), and creating one
 * preallocates all its elements: some milliseconds of start-up each for a
 * per-CPU map of 4096. They are made with one entry instead, so printing
 * and clearing them still finds a real, empty map.
 */
static bool *load_referenced_maps(const struct program *program)
{
	bool *referenced = xcalloc((size_t)program->maps.count + 1, sizeof(*referenced));

	for (int p = 0; p < program->probes.count; p++) {
		const struct probe_program *probe = &program->probes.items[p];
		for (int i = 0; i < probe->insn_count; i++) {
			const struct bpf_insn *insn = &probe->insns[i];
			if (insn->code != (BPF_LD | BPF_DW | BPF_IMM))
				continue;
			if ((insn->src_reg == BPF_PSEUDO_MAP_FD || insn->src_reg == BPF_PSEUDO_MAP_VALUE) &&
			    insn->imm >= 0 && insn->imm < program->maps.count)
				referenced[insn->imm] = true;
			i++; /* the second half of the 16-byte load */
		}
	}
	return referenced;
}

/* A user hash map no instruction names is made with one entry. */
static bool load_map_stays_empty(const struct map_desc *map, bool referenced)
{
	return !referenced && map->role == MAP_ROLE_USER &&
	       (map->bpf_map_type == BPF_MAP_TYPE_HASH || map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH ||
		map->bpf_map_type == BPF_MAP_TYPE_LRU_HASH ||
		map->bpf_map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH);
}

static int load_maps(struct program *program, uint32_t ringbuf_size)
{
	uint32_t zero = 0;
	bool *referenced = load_referenced_maps(program);

	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];
		uint32_t key_size = map->key_size;
		uint32_t value_size = map->value_size;
		uint32_t max_entries = map->max_entries;
		char name[16];
		int fd;

		if (map->role == MAP_ROLE_PINNED) {
			char *error = NULL;
			fd = pinned_map_open(map->pin_path, map->key_size, &error);
			if (fd < 0) {
				fprintf(stderr, "sonde: %s\n", error);
				free(error);
				free(referenced);
				return -1;
			}
			map->fd = fd;
			continue;
		}
		if (map->role == MAP_ROLE_RINGBUF) {
			key_size = 0;
			value_size = 0;
			max_entries = ringbuf_size;
		}
		if (load_map_stays_empty(map, referenced[i]))
			max_entries = 1;
		LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = load_map_flags(map));

		load_object_name(name, sizeof(name), "", map->name);
		fd = bpf_map_create(map->bpf_map_type, name, key_size, value_size, max_entries,
				    &opts);
		if (fd >= 0 && map->initial_value &&
		    bpf_map_update_elem(fd, &zero, map->initial_value, BPF_ANY) != 0) {
			int err = errno;

			close(fd);
			fprintf(stderr, "sonde: cannot fill the table %s (%u bytes): %s\n", map->name,
				value_size, strerror(err));
			free(referenced);
			return -1;
		}
		if (fd < 0) {
			int err = errno;

			if ((err == EPERM || err == EACCES) && geteuid() != 0)
				fputs(load_root_message, stderr);
			else
				fprintf(stderr,
					"sonde: cannot create %s map %s (key %u bytes, value %u "
					"bytes, %u entries): %s\n",
					load_map_kind(map->bpf_map_type), map->name, key_size,
					value_size, max_entries, strerror(err));
			free(referenced);
			return -1;
		}
		map->fd = fd;
	}
	free(referenced);
	return 0;
}

/* A copy of probe's instructions with map ids replaced by map fds. */
static struct bpf_insn *load_patch_maps(const struct program *program,
					const struct probe_program *probe)
{
	struct bpf_insn *insns = xmalloc(sizeof(*insns) * (size_t)(probe->insn_count ? probe->insn_count : 1));

	memcpy(insns, probe->insns, sizeof(*insns) * (size_t)probe->insn_count);
	for (int i = 0; i < probe->insn_count; i++) {
		struct bpf_insn *insn = &insns[i];

		if (insn->code != (BPF_LD | BPF_DW | BPF_IMM))
			continue;
		if (insn->src_reg == BPF_PSEUDO_MAP_FD || insn->src_reg == BPF_PSEUDO_MAP_VALUE) {
			if (insn->imm < 0 || insn->imm >= program->maps.count) {
				fprintf(stderr,
					"sonde: internal error: probe %s instruction %d refers to "
					"map %d of %d\n",
					probe->name, i, insn->imm, program->maps.count);
				free(insns);
				return NULL;
			}
			insn->imm = program->maps.items[insn->imm].fd;
		}
		i++; /* the second half of the 16-byte load */
	}
	return insns;
}

/* Index of the instruction the verifier stopped at: the last log line that
 * looks like "NN: (op) ...". -1 when there is none. */
static int load_failing_insn(const char *log)
{
	int failing = -1;

	for (const char *line = log; line && *line;) {
		const char *p = line;
		const char *next = strchr(line, '\n');

		if (isdigit((unsigned char)*p)) {
			long index = strtol(p, (char **)&p, 10);

			if (p[0] == ':' && p[1] == ' ' && p[2] == '(')
				failing = (int)index;
		}
		line = next ? next + 1 : NULL;
	}
	return failing;
}

/* Splits the log into lines (in place) and returns them; drops empty lines. */
static char **load_log_lines(char *log, int *count)
{
	char **lines = NULL;
	int n = 0, capacity = 0;

	for (char *line = log; line && *line;) {
		char *next = strchr(line, '\n');

		if (next)
			*next++ = '\0';
		if (*line) {
			if (n == capacity) {
				capacity = capacity ? capacity * 2 : 64;
				lines = xrealloc(lines, sizeof(*lines) * (size_t)capacity);
			}
			lines[n++] = line;
		}
		line = next;
	}
	*count = n;
	return lines;
}

static void load_report_rejection(const struct program *program,
				  const struct probe_program *probe, char *log, int err)
{
	struct diag diag;
	char **lines;
	int line_count, first, failing, reason_line;
	const char *reason;

	diag_init(&diag, &program->source, stderr);
	failing = load_failing_insn(log);
	lines = load_log_lines(log, &line_count);

	/* The verifier's own sentence comes just before its statistics line
	 * ("processed N insns ..."), if it printed one. */
	reason_line = line_count - 1;
	while (reason_line >= 0 && (strncmp(lines[reason_line], "processed ", 10) == 0 ||
				    strncmp(lines[reason_line], "verification time", 17) == 0 ||
				    strncmp(lines[reason_line], "stack depth", 11) == 0))
		reason_line--;
	reason = reason_line >= 0 ? lines[reason_line] : strerror(err);

	if (failing >= 0 && failing < probe->insn_count && probe->insn_locs &&
	    probe->insn_locs[failing].line > 0)
		diag_error(&diag, probe->insn_locs[failing],
			   "the BPF verifier rejected probe %s at instruction %d: %s", probe->name,
			   failing, reason);
	else
		diag_error_noloc(&diag, "the BPF verifier rejected probe %s: %s", probe->name,
				 reason);

	first = line_count > LOAD_LOG_TAIL_LINES ? line_count - LOAD_LOG_TAIL_LINES : 0;
	if (line_count > 0) {
		fprintf(stderr, "verifier log (last %d of %d lines):\n", line_count - first,
			line_count);
		for (int i = first; i < line_count; i++)
			fprintf(stderr, "    %s\n", lines[i]);
	}
	free(lines);
}

/* Why probe could not be loaded, for an errno that says nothing of the
 * verifier: out of descriptors is named as such, with the limit. */
static void load_report_failure(const struct probe_program *probe, int err)
{
	if (err == EMFILE || err == ENFILE) {
		struct rlimit files = { 0 };
		getrlimit(RLIMIT_NOFILE, &files);
		fprintf(stderr, "sonde: cannot load probe %s: no file descriptor left (%s; this "
			"process may open %llu files, and each probe, map and attachment holds one)\n",
			probe->name, strerror(err), (unsigned long long)files.rlim_cur);
		return;
	}
	fprintf(stderr, "sonde: cannot load probe %s: %s\n", probe->name, strerror(err));
}

/* The "processed N insns ..." line of a statistics log, or NULL. */
static const char *load_stats_line(char *log)
{
	char *line = strstr(log, "processed ");
	char *end;

	if (!line)
		return NULL;
	end = strchr(line, '\n');
	if (end)
		*end = '\0';
	return line;
}

static void load_print_stats(const struct probe_program *probe, char *stats_log)
{
	struct bpf_prog_info info;
	uint32_t info_length = sizeof(info);
	const char *stats = stats_log ? load_stats_line(stats_log) : NULL;

	memset(&info, 0, sizeof(info));
	fprintf(stderr, "probe %s: %d instructions", probe->name, probe->insn_count);
	if (bpf_obj_get_info_by_fd(probe->prog_fd, &info, &info_length) == 0)
		fprintf(stderr, ", %u bytes translated, %u bytes JIT-compiled", info.xlated_prog_len,
			info.jited_prog_len);
	fputc('\n', stderr);
	if (stats)
		fprintf(stderr, "  verifier: %s\n", stats);
}

static int load_one(struct program *program, struct probe_program *probe, int verbose)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	struct bpf_insn *insns;
	struct func_info functions;
	char name[16];
	const char *short_name = strrchr(probe->name, ':');
	char *log = NULL;
	int fd, err;

	insns = load_patch_maps(program, probe);
	if (!insns)
		return -1;
	/* Callbacks (bpf_for_each_map_elem) are accepted only with BTF that
	 * describes each function of the program. */
	err = func_info_build(probe, &functions);
	if (err < 0) {
		fprintf(stderr, "sonde: cannot describe the functions of probe %s to the kernel: %s\n",
			probe->name, strerror(-err));
		free(insns);
		return -1;
	}
	if (functions.btf_fd >= 0) {
		opts.prog_btf_fd = (uint32_t)functions.btf_fd;
		opts.func_info = functions.records;
		opts.func_info_cnt = (uint32_t)functions.count;
		opts.func_info_rec_size = sizeof(*functions.records);
	}
	load_object_name(name, sizeof(name), "sonde_", short_name ? short_name + 1 : probe->name);
	opts.expected_attach_type = probe->expected_attach_type;
	opts.attach_btf_id = probe->attach_btf_id;
	opts.attach_btf_obj_fd = (uint32_t)probe->attach_btf_obj_fd;
	if (verbose > 0) {
		log = xcalloc(1, LOAD_STATS_LOG_SIZE);
		opts.log_buf = log;
		opts.log_size = LOAD_STATS_LOG_SIZE;
		opts.log_level = 4; /* BPF_LOG_STATS: only the totals */
	}
	fd = bpf_prog_load(probe->prog_type, name, "GPL", insns, (size_t)probe->insn_count, &opts);
	if (fd >= 0) {
		probe->prog_fd = fd;
		if (verbose > 0)
			load_print_stats(probe, log);
		free(log);
		free(insns);
		func_info_free(&functions);
		return 0;
	}
	err = errno;
	free(log);
	if (err == EPERM && geteuid() != 0) {
		fputs(load_root_message, stderr);
		free(insns);
		func_info_free(&functions);
		return -1;
	}
	if (err == EMFILE || err == ENFILE) {
		/* the program passed the verifier; there was no descriptor for it */
		load_report_failure(probe, err);
		free(insns);
		func_info_free(&functions);
		return -1;
	}

	/* Again, with the verifier's full account of why. */
	log = xmalloc(LOAD_LOG_SIZE);
	log[0] = '\0';
	opts.log_buf = log;
	opts.log_size = LOAD_LOG_SIZE;
	opts.log_level = 1;
	fd = bpf_prog_load(probe->prog_type, name, "GPL", insns, (size_t)probe->insn_count, &opts);
	if (fd >= 0) {
		/* Loading with a log can succeed where loading without failed
		 * only on a transient error; accept it. */
		probe->prog_fd = fd;
		if (verbose > 0)
			load_print_stats(probe, NULL);
	} else {
		int log_err = errno;

		log[LOAD_LOG_SIZE - 1] = '\0';
		if (log[0])
			load_report_rejection(program, probe, log, log_err);
		else
			load_report_failure(probe, log_err);
	}
	free(log);
	free(insns);
	func_info_free(&functions);
	return fd >= 0 ? 0 : -1;
}

/* An earlier probe whose program is the same as probe `index`'s, to share:
 * a wildcard whose body names no probe-specific builtin (`probe`, `func`,
 * args) compiles to one program per point, hundreds of identical ones,
 * and the kernel verifies each load anew. */
static const struct probe_program *load_find_same(const struct program *program, int index)
{
	const struct probe_program *probe = &program->probes.items[index];

	for (int i = index - 1; i >= 0; i--) {
		const struct probe_program *other = &program->probes.items[i];

		if (other->prog_fd >= 0 && other->prog_type == probe->prog_type &&
		    other->expected_attach_type == probe->expected_attach_type &&
		    other->attach_btf_id == probe->attach_btf_id &&
		    other->attach_btf_obj_fd == probe->attach_btf_obj_fd &&
		    other->function_count == probe->function_count &&
		    other->insn_count == probe->insn_count &&
		    memcmp(other->insns, probe->insns,
			   sizeof(*probe->insns) * (size_t)probe->insn_count) == 0)
			return other;
	}
	return NULL;
}

int load_program(struct program *program, int verbose)
{
	uint32_t ringbuf_size;
	char *error = NULL;

	for (int i = 0; i < program->maps.count; i++)
		program->maps.items[i].fd = -1;
	for (int i = 0; i < program->probes.count; i++)
		program->probes.items[i].prog_fd = -1;
	if (load_ringbuf_size(program->settings.ringbuf_size, &ringbuf_size, &error) < 0) {
		fprintf(stderr, "sonde: %s\n", error);
		free(error);
		return -1;
	}
	if (load_maps(program, ringbuf_size) < 0)
		goto fail;
	for (int i = 0; i < program->probes.count; i++) {
		struct probe_program *probe = &program->probes.items[i];
		const struct probe_program *same = load_find_same(program, i);

		if (same) {
			probe->prog_fd = fcntl(same->prog_fd, F_DUPFD_CLOEXEC, 0);
			if (probe->prog_fd < 0) {
				load_report_failure(probe, errno);
				goto fail;
			}
			continue;
		}
		if (load_one(program, probe, verbose) < 0)
			goto fail;
	}
	return 0;
fail:
	load_close(program);
	return -1;
}

void load_close(struct program *program)
{
	for (int i = 0; i < program->probes.count; i++) {
		struct probe_program *probe = &program->probes.items[i];

		if (probe->prog_fd >= 0)
			close(probe->prog_fd);
		probe->prog_fd = -1;
	}
	for (int i = 0; i < program->maps.count; i++) {
		struct map_desc *map = &program->maps.items[i];

		if (map->fd >= 0)
			close(map->fd);
		map->fd = -1;
	}
}
