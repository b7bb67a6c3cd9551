/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event consumer: everything BPF programs ask user space to do arrives
 * here through the ring buffer.
 *
 * Each record starts with a u64 index into program->events; the event
 * description says what the rest of the record holds and what to do with it
 * (print formatted text, run a command, print or clear a map, stop). Records
 * are handled in the order the kernel committed them, so output from
 * different probes interleaves the way it happened.
 *
 * Two things keep the output honest:
 *  - exit(): like bpftrace, records committed after the exit() record are
 *    consumed but not acted on (other CPUs keep firing until the probes are
 *    detached); END's records, which come later, are printed again.
 *  - exit() also sets a per-CPU slot of the lost-count map, read after
 *    every poll: a ring kept full by a flood drops the exit record, but not
 *    the request. The run then ends, and what is already in the ring is
 *    still drained and printed (or muted after the exit record, if that
 *    made it in).
 *  - lost records: a BPF program whose bpf_ringbuf_output() fails (ring
 *    full) bumps a per-CPU counter. The counter is summed every 100 ms
 *    while events flow and once more at exit, and every increase is
 *    reported, so nothing disappears silently.
 *
 * A process-seen record (a process whose user stacks or symbols will be
 * printed, sent the first time it takes one) is handled before anything
 * else, even after exit(): its maps are read at once, while it still runs.
 *
 * Output is flushed once per batch of records, not per record: prompt for a
 * reader at the other end of a pipe, cheap when thousands arrive at once.
 */
#include "runtime/load.h"
#include "runtime/losses.h"
#include "runtime/skipped.h"
#include "runtime/symbols.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* bpftrace's default for cat(): print at most this much of a file. */
#define EVENTS_CAT_MAX_BYTES 10240
/* Map updates and stacks can be lost at every event: one line at the first,
 * then at most one every 5 s, and the rest with a total at exit. */
#define EVENTS_LOSS_REPORT_NS 5000000000ull
#define EVENTS_LOST_INTERVAL_NS 100000000ull
/* Longest a poll may spend handling records before returning to the caller
 * (which must notice Ctrl-C and the end of the -c child). */
#define EVENTS_BATCH_BUDGET_NS 100000000ull
/* After a stop signal, the longest the last drain prints what is left in
 * the ring: the user asked to stop, and a probe that fires on everything
 * (malloc) leaves more than a second's printing behind. The rest is
 * consumed unprinted and counted. */
#define EVENTS_STOP_BUDGET_NS 300000000ull
/* What the record callback returns to end a batch early. libbpf has already
 * consumed the record by then, so nothing is lost or seen twice. */
#define EVENTS_BATCH_CUT (-ECANCELED)

/* A counting slot of the .lost map, reported at most every
 * EVENTS_LOSS_REPORT_NS. */
struct loss_report {
	uint32_t slot;
	uint64_t reported;           /* sum already reported */
	int reports;
	uint64_t reported_ns;        /* when last reported; 0 = never */
};

struct event_loop {
	struct program *program;
	const struct runtime_options *options;
	struct output output;
	struct picture picture;      /* --svg / --heatmap: output.picture points here */
	struct ring_buffer *ring;
	struct strbuf text;          /* reused for every formatted record */
	bool exit_requested;
	int exit_code;
	bool muted;                  /* after exit(): consume, do not act */
	bool warned_bad_record;
	bool warned_unsafe;
	int lost_fd;                 /* -1 when the program has no lost counter */
	int cpu_count;
	uint64_t *lost_values;       /* one per possible CPU */
	uint64_t lost_reported;      /* sum already reported */
	struct loss_report refused;  /* map updates refused (full maps) */
	struct loss_report stacks;   /* stacks the stack map could not take */
	struct skipped_runs *skipped; /* probe runs the kernel skipped */
	uint64_t *zero_divisions;    /* by program.zero_divisors site: counted so far */
	uint64_t *helper_errors;     /* by program.helper_sites site (-k): counted so far */
	int lost_reports;
	uint64_t lost_checked_ns;
	const volatile sig_atomic_t *stop; /* set by a stop signal: batches end at once */
	bool discarding;             /* stopped: consume and count, do not act */
	uint64_t discarded;          /* records consumed unprinted because of a stop */
	bool batch_limited;          /* inside a poll or drain: honour the budget and the stop */
	uint64_t batch_deadline_ns;
	uint64_t batch_budget_ns;    /* EVENTS_BATCH_BUDGET_NS unless the loop serves scrapes */
};

/* Writes text to the output: as is, or as {"type": kind, "data": "text"}. */
static void events_emit(struct event_loop *loop, const char *kind, const char *text,
			size_t length)
{
	FILE *out = loop->output.file;

	if (!loop->output.json) {
		fwrite(text, 1, length, out);
		return;
	}
	struct strbuf json;

	strbuf_init(&json);
	strbuf_printf(&json, "{\"type\": \"%s\", \"data\": ", kind);
	format_json_string(&json, text, length);
	strbuf_puts(&json, "}\n");
	fwrite(json.data, 1, json.length, out);
	strbuf_free(&json);
}

static struct map_desc *events_map(struct event_loop *loop, int map_id)
{
	if (map_id < 0 || map_id >= loop->program->maps.count)
		return NULL;
	return &loop->program->maps.items[map_id];
}

static bool events_map_is_percpu(const struct map_desc *map)
{
	return map->bpf_map_type == BPF_MAP_TYPE_PERCPU_HASH ||
	       map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       map->bpf_map_type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

/* clear(@m): delete every key. The bound stops a probe that keeps
 * inserting from holding us here forever. */
static void events_zero_map(struct event_loop *loop, const struct map_desc *map);

/* Keys read and deleted per BPF_MAP_LOOKUP_AND_DELETE_BATCH call, at first */
#define EVENTS_CLEAR_CHUNK 4096u

/*
 * A hash map emptied a few thousand keys per system call (Linux 5.6): the
 * walk below takes two per key, a third of a profile's exit for its 15,000
 * stacks. -errno when the kernel cannot; the caller then walks.
 */
static int events_clear_batch(struct event_loop *loop, const struct map_desc *map)
{
	size_t key_size = map->key_size ? map->key_size : 1;
	size_t value_size = map->value_size ? map->value_size : 1;
	size_t token_size = key_size > 8 ? key_size : 8;
	uint32_t chunk = EVENTS_CLEAR_CHUNK;
	long limit = (long)map->max_entries * 2 + 16;
	bool started = false;
	int err = 0;

	if (events_map_is_percpu(map))
		value_size = ((value_size + 7) & ~(size_t)7) * (size_t)loop->cpu_count;
	unsigned char *tokens = xcalloc(2, token_size);
	unsigned char *in = tokens, *out = tokens + token_size;
	unsigned char *keys = xcalloc(chunk, key_size);
	unsigned char *values = xcalloc(chunk, value_size);
	while (limit > 0) {
		uint32_t got = chunk;
		LIBBPF_OPTS(bpf_map_batch_opts, opts);
		err = bpf_map_lookup_and_delete_batch(map->fd, started ? in : NULL, out, keys,
						      values, &got, &opts) < 0 ? -errno : 0;
		if (err == -ENOSPC && got == 0 && chunk < (1u << 20)) {
			chunk *= 2; /* one hash bucket holds more keys than that */
			keys = xrealloc(keys, (size_t)chunk * key_size);
			values = xrealloc(values, (size_t)chunk * value_size);
			continue;
		}
		if (err == -ENOENT) { /* the end of the map */
			err = 0;
			break;
		}
		if (err)
			break;
		limit -= got;
		unsigned char *swap = in;
		in = out;
		out = swap;
		started = true;
	}
	free(values);
	free(keys);
	free(tokens);
	return err;
}

static void events_clear_map(struct event_loop *loop, const struct map_desc *map)
{
	void *key = xcalloc(1, map->key_size ? map->key_size : 1);
	long limit = (long)map->max_entries * 2 + 16;

	if (map->bpf_map_type == BPF_MAP_TYPE_ARRAY || map->bpf_map_type == BPF_MAP_TYPE_PERCPU_ARRAY) {
		/* Arrays cannot lose keys; clearing them means zeroing. */
		free(key);
		events_zero_map(loop, map);
		return;
	}
	if (events_clear_batch(loop, map) == 0) {
		free(key);
		return;
	}
	/* Each key is deleted once the next one is known: asking for the first
	 * key anew after every delete scans the hash table from its first
	 * bucket each time, quadratic in a big map (seconds for a profile's
	 * 131,072-entry map of 13,000 stacks). */
	bool more = bpf_map_get_next_key(map->fd, NULL, key) == 0;
	void *next = xcalloc(1, map->key_size ? map->key_size : 1);
	while (more && limit-- > 0) {
		more = bpf_map_get_next_key(map->fd, key, next) == 0;
		if (bpf_map_delete_elem(map->fd, key) != 0 && errno != ENOENT)
			break;
		void *swap = key;
		key = next;
		next = swap;
	}
	free(next);
	free(key);
}

/* zero(@m): every value to zero, keys kept. */
static void events_zero_map(struct event_loop *loop, const struct map_desc *map)
{
	size_t key_size = map->key_size ? map->key_size : 1;
	size_t value_size = map->value_size;
	VEC(char *) keys = { 0 };
	void *zero;
	void *prev = NULL;
	char *key;

	if (events_map_is_percpu(map))
		value_size = ((value_size + 7) & ~(size_t)7) * (size_t)loop->cpu_count;
	zero = xcalloc(1, value_size ? value_size : 1);
	for (;;) {
		key = xmalloc(key_size);
		if (bpf_map_get_next_key(map->fd, prev, key) != 0 ||
		    keys.count > (int)map->max_entries) {
			free(key);
			break;
		}
		vec_push(&keys, key);
		prev = key;
	}
	for (int i = 0; i < keys.count; i++) {
		bpf_map_update_elem(map->fd, keys.items[i], zero, BPF_EXIST);
		free(keys.items[i]);
	}
	free(keys.items);
	free(zero);
}

/* time(): the current local time through the event's strftime format. */
static void events_time(struct event_loop *loop, const struct event_desc *event)
{
	struct strbuf *sb = &loop->text;

	strbuf_reset(sb);
	if (event->format && *event->format) {
		format_event(sb, event, NULL);
	} else {
		char text[64];
		struct tm tm;
		time_t now = time(NULL);

		localtime_r(&now, &tm);
		strbuf_append(sb, text, strftime(text, sizeof(text), "%H:%M:%S\n", &tm));
	}
	events_emit(loop, "time", sb->data ? sb->data : "", sb->length);
}

/* cat(): at most SONDE_MAX_CAT_BYTES (or the config block's max_cat_bytes,
 * else EVENTS_CAT_MAX_BYTES) of the file. Opened without
 * blocking, so a FIFO with no writer (or a terminal, a socket) gives what it
 * has at once rather than holding the run up for ever. */
static void events_cat(struct event_loop *loop, const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat file_status;
	char *data;
	size_t length = 0;

	if (fd >= 0 && fstat(fd, &file_status) == 0 && S_ISDIR(file_status.st_mode)) {
		close(fd);
		fd = -1;
		errno = EISDIR;
	}
	if (fd < 0) {
		fprintf(stderr, "sonde: cat: failed to open file '%s': %s\n", path, strerror(errno));
		return;
	}
	size_t limit = loop->options->max_cat_bytes ? loop->options->max_cat_bytes
		       : loop->program->settings.max_cat_bytes ? loop->program->settings.max_cat_bytes
		       : EVENTS_CAT_MAX_BYTES;
	data = xmalloc(limit);
	while (length < limit) {
		ssize_t got = read(fd, data + length, limit - length);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno != EAGAIN)
			fprintf(stderr, "sonde: cat: failed to read file '%s': %s\n", path,
				strerror(errno));
		if (got <= 0)
			break;
		length += (size_t)got;
	}
	close(fd);
	events_emit(loop, "cat", data, length);
	free(data);
}

/* system(): runs the command through the shell and copies its output into
 * ours, so it lands between the surrounding printf()s as bpftrace's does. */
static void events_system(struct event_loop *loop, const char *command)
{
	struct strbuf result;
	char chunk[4096];
	size_t length;
	FILE *pipe;

	if (!loop->options->unsafe) {
		if (!loop->warned_unsafe)
			fprintf(stderr, "sonde: system() needs --unsafe; not running '%s'\n",
				command);
		loop->warned_unsafe = true;
		return;
	}
	fflush(loop->output.file);
	pipe = popen(command, "r");
	if (!pipe) {
		fprintf(stderr, "sonde: system: cannot run '%s': %s\n", command, strerror(errno));
		return;
	}
	strbuf_init(&result);
	while ((length = fread(chunk, 1, sizeof(chunk), pipe)) > 0)
		strbuf_append(&result, chunk, length);
	pclose(pipe);
	events_emit(loop, "syscall", result.data ? result.data : "", result.length);
	strbuf_free(&result);
}

/* join(argv[, delim]): the strings joined on one line. */
static void events_join(struct event_loop *loop, const struct event_desc *event,
			const uint8_t *record)
{
	struct strbuf *sb = &loop->text;

	strbuf_reset(sb);
	format_event(sb, event, record);
	if (!loop->output.json)
		strbuf_putc(sb, '\n');
	events_emit(loop, "join", sb->data ? sb->data : "", sb->length);
}

static void events_warn_bad_record(struct event_loop *loop, const char *why)
{
	if (!loop->warned_bad_record)
		fprintf(stderr, "sonde: internal error: ignoring ring-buffer record: %s\n", why);
	loop->warned_bad_record = true;
}

/* printf_matching(), row_matching(): whether each part of the line between
 * a pair of MESSAGE_MARK bytes holds its needle (the needles are joined by
 * MESSAGE_MARK too); the marks are taken out of the line. A mark produced by
 * an argument (a string holding 0x1f) ends a part early, which only makes a
 * line less likely to be kept. */
static bool events_keep_match(struct strbuf *text, const char *needles)
{
	static const char mark[] = { MESSAGE_MARK, 0 };
	bool keep = true;
	size_t from = 0;
	for (const char *needle = needles;; needle++) {
		size_t needle_length = strcspn(needle, mark);
		char *start = text->data && from < text->length
				      ? memchr(text->data + from, MESSAGE_MARK, text->length - from) : NULL;
		char *end = start ? memchr(start + 1, MESSAGE_MARK,
					   text->length - (size_t)(start + 1 - text->data)) : NULL;
		if (!end)
			return false;
		size_t length = (size_t)(end - start - 1);
		keep = keep && memmem(start + 1, length, needle, needle_length) != NULL;
		/* the marks out: the part moves left one byte, the rest two */
		memmove(start, start + 1, length);
		memmove(end - 1, end + 1, text->length - (size_t)(end + 1 - text->data) + 1);
		text->length -= 2;
		from = (size_t)(end - 1 - text->data);
		needle += needle_length;
		if (!*needle)
			return keep;
	}
}

static int events_handle(void *context, void *data, size_t size)
{
	struct event_loop *loop = context;
	const uint8_t *record = data;
	const struct event_desc *event;
	struct map_desc *map;
	uint64_t index;

	if (size < sizeof(index)) {
		events_warn_bad_record(loop, "shorter than its event number");
		return 0;
	}
	memcpy(&index, record, sizeof(index));
	if (index >= (uint64_t)loop->program->events.count) {
		events_warn_bad_record(loop, "unknown event number");
		return 0;
	}
	event = &loop->program->events.items[index];
	if (size < (size_t)event->record_size) {
		events_warn_bad_record(loop, "shorter than its event says");
		return 0;
	}
	/* Even after exit(): END may still print this process's stacks. */
	if (event->kind == EVENT_PROCESS_SEEN) {
		int64_t pid;
		memcpy(&pid, record + event->args[0].offset, sizeof(pid));
		symbols_user_prepare((pid_t)pid);
		return 0;
	}
	if (loop->discarding) {
		loop->discarded++;
		return 0;
	}
	if (loop->muted)
		return 0;

	switch (event->kind) {
	case EVENT_PRINTF:
		strbuf_reset(&loop->text);
		format_event(&loop->text, event, record);
		if (event->match && !events_keep_match(&loop->text, event->match))
			break;
		events_emit(loop, "printf", loop->text.data ? loop->text.data : "",
			    loop->text.length);
		break;
	case EVENT_SYSTEM:
		strbuf_reset(&loop->text);
		format_event(&loop->text, event, record);
		events_system(loop, loop->text.data ? loop->text.data : "");
		break;
	case EVENT_CAT:
		strbuf_reset(&loop->text);
		format_event(&loop->text, event, record);
		events_cat(loop, loop->text.data ? loop->text.data : "");
		break;
	case EVENT_TIME:
		events_time(loop, event);
		break;
	case EVENT_EXIT: {
		int64_t code = 0;

		if (event->arg_count > 0)
			memcpy(&code, record + event->args[0].offset, sizeof(code));
		loop->exit_requested = true;
		loop->exit_code = (int)code;
		loop->muted = true;
		/* Back to the caller at once, so the probes are detached soon. */
		return loop->batch_limited ? EVENTS_BATCH_CUT : 0;
	}
	case EVENT_PRINT_MAP:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			print_map(&loop->output, map, event->top, event->div);
		break;
	case EVENT_CLEAR_MAP:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			events_clear_map(loop, map);
		if (map)
			map->zeroed = false;
		break;
	case EVENT_ZERO_MAP:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			events_zero_map(loop, map);
		if (map)
			map->zeroed = true;
		break;
	case EVENT_PRINT_VALUE:
		if (event->arg_count > 0)
			print_value(&loop->output, event->args[0].type,
				    record + event->args[0].offset);
		break;
	case EVENT_JOIN:
		events_join(loop, event, record);
		break;
	case EVENT_ROW:
		strbuf_reset(&loop->text);
		if (event->match) {
			/* row_matching(): the text line decides, in JSON too */
			format_event(&loop->text, event, record);
			if (!events_keep_match(&loop->text, event->match))
				break;
			if (loop->output.json)
				strbuf_reset(&loop->text);
		}
		if (loop->output.json) {
			strbuf_putc(&loop->text, '{');
			format_json_fields(&loop->text, event, record);
			strbuf_puts(&loop->text, "}\n");
		} else if (!event->match) {
			format_event(&loop->text, event, record);
		}
		if (loop->text.length)
			fwrite(loop->text.data, 1, loop->text.length, loop->output.file);
		break;
	case EVENT_PRINT_LOG2_HIST:
	case EVENT_PRINT_LINEAR_HIST:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			print_tool_histograms(&loop->output, map, event);
		break;
	case EVENT_PRINT_TOP:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			print_tool_top(&loop->output, loop->program, event);
		break;
	case EVENT_PRINT_STACKS:
		map = events_map(loop, event->map_id);
		if (map && map->fd >= 0)
			print_tool_stacks(&loop->output, map, event);
		break;
	case EVENT_PROCESS_SEEN:
		break;
	}
	/* A ring that refills as fast as it drains would otherwise keep
	 * ring_buffer__poll() busy for ever; a stop goes before the rest. */
	if (loop->batch_limited &&
	    ((loop->stop && *loop->stop) || monotonic_ns() > loop->batch_deadline_ns))
		return EVENTS_BATCH_CUT;
	return 0;
}

struct event_loop *event_loop_new(struct program *program, const struct runtime_options *options,
				  FILE *out, struct outfile *picture_file)
{
	struct event_loop *loop = xcalloc(1, sizeof(*loop));
	struct map_desc *map;
	int cpus;

	loop->program = program;
	loop->options = options;
	loop->output.file = out;
	loop->output.json = options->json;
	if (options->picture.kind != PICTURE_NONE) {
		loop->picture.request = options->picture;
		loop->output.picture = &loop->picture;
		picture_init(&loop->picture, picture_file);
	}
	loop->lost_fd = -1;
	loop->batch_budget_ns = EVENTS_BATCH_BUDGET_NS;
	strbuf_init(&loop->text);
	cpus = libbpf_num_possible_cpus();
	loop->cpu_count = cpus > 0 ? cpus : 1;

	map = events_map(loop, program->ringbuf_map_id);
	if (map && map->fd >= 0) {
		loop->ring = ring_buffer__new(map->fd, events_handle, loop, NULL);
		if (!loop->ring) {
			fprintf(stderr, "sonde: cannot read the ring buffer: %s\n", strerror(errno));
			event_loop_free(loop);
			return NULL;
		}
	}
	map = events_map(loop, program->lost_map_id);
	if (map && map->fd >= 0) {
		loop->lost_fd = map->fd;
		loop->refused.slot = LOST_SLOT_REFUSED;
		loop->stacks.slot = LOST_SLOT_STACKS;
		loop->lost_values = xcalloc((size_t)loop->cpu_count, sizeof(uint64_t));
	}
	loop->zero_divisions = xcalloc((size_t)program->zero_divisors.count + 1, sizeof(uint64_t));
	loop->helper_errors = xcalloc((size_t)program->helper_sites.count + 1, sizeof(uint64_t));
	loop->skipped = skipped_runs_new(program);
	return loop;
}

void event_loop_free(struct event_loop *loop)
{
	if (!loop)
		return;
	if (loop->ring)
		ring_buffer__free(loop->ring);
	strbuf_free(&loop->text);
	free(loop->lost_values);
	free(loop->zero_divisions);
	free(loop->helper_errors);
	skipped_runs_free(loop->skipped);
	picture_free(&loop->picture);
	free(loop);
}

/* "raise SONDE_MAX_MAP_ENTRIES, now 4096": what sets the size of the maps of
 * this role (distinct settings joined by "; "), for a full-map line. */
static void events_size_advice(const struct program *program, bool stacks, struct strbuf *advice)
{
	for (int i = 0; i < program->maps.count; i++) {
		const struct map_desc *map = &program->maps.items[i];
		bool seen = false;
		if (!map->sized_by || (map->role == MAP_ROLE_STACKS) != stacks)
			continue;
		for (int j = 0; j < i && !seen; j++) {
			const struct map_desc *other = &program->maps.items[j];
			seen = other->sized_by && (other->role == MAP_ROLE_STACKS) == stacks &&
			       strcmp(other->sized_by, map->sized_by) == 0 &&
			       other->max_entries == map->max_entries;
		}
		if (!seen)
			strbuf_printf(advice, "%sraise %s, now %u", advice->length ? "; " : "",
				      map->sized_by, map->max_entries);
	}
}

/* A counting slot's growth since it was last reported: a line at once the
 * first time, then at most every EVENTS_LOSS_REPORT_NS, the rest at exit,
 * and a total at exit when it took several lines. */
static void events_report_loss(struct event_loop *loop, struct loss_report *report, bool at_exit,
			       uint64_t now)
{
	uint64_t total = 0;

	if (!at_exit && report->reported_ns && now - report->reported_ns < EVENTS_LOSS_REPORT_NS)
		return;
	if (!lost_slot_total(loop->lost_fd, report->slot, loop->lost_values, loop->cpu_count, &total))
		return;
	bool stacks = report->slot == LOST_SLOT_STACKS;
	const char *what = stacks ? "stacks" : "map updates";
	if (total > report->reported) {
		struct strbuf advice;
		strbuf_init(&advice);
		events_size_advice(loop->program, stacks, &advice);
		fflush(loop->output.file);
		fprintf(stderr, "Lost %llu %s: %s (%s)\n",
			(unsigned long long)(total - report->reported), what,
			stacks ? "the stack map is full or a hash bucket was taken" : "a map is full",
			advice.length ? advice.data : "maps are full");
		strbuf_free(&advice);
		report->reported = total;
		report->reports++;
		report->reported_ns = now;
	}
	if (at_exit && report->reports > 1)
		fprintf(stderr, "Lost %llu %s in total\n", (unsigned long long)total, what);
}

/* Divisions by zero, counted per site by the programs: the first one at a
 * site is a located warning; at exit, a site that saw more says how many. */
static void events_check_zero_divisions(struct event_loop *loop, bool at_exit)
{
	const struct program *program = loop->program;
	struct diag diag;

	diag_init(&diag, &program->source, stderr);
	for (int site = 0; site < program->zero_divisors.count; site++) {
		uint32_t key = LOST_SLOT_ZERO_DIVISOR + (uint32_t)site;
		uint64_t total;
		struct src_loc loc = program->zero_divisors.items[site];

		if (!lost_slot_total(loop->lost_fd, key, loop->lost_values, loop->cpu_count, &total))
			continue;
		if (total > 0 && loop->zero_divisions[site] == 0) {
			fflush(loop->output.file);
			diag_warning(&diag, loc, "division or remainder by zero: 1 is used as the result "
				     "(reported once; counted until exit)");
		}
		loop->zero_divisions[site] = total;
		if (at_exit && total > 1)
			fprintf(stderr, "%s:%d:%d: note: %llu divisions or remainders by zero here\n",
				program->source.filename ? program->source.filename : "stdin", loc.line,
				loc.column, (unsigned long long)total);
	}
}

static const char *events_helper_name(int helper)
{
	switch (helper) {
	case BPF_FUNC_probe_read: return "probe_read";
	case BPF_FUNC_probe_read_str: return "probe_read_str";
	case BPF_FUNC_probe_read_user: return "probe_read_user";
	case BPF_FUNC_probe_read_user_str: return "probe_read_user_str";
	case BPF_FUNC_probe_read_kernel: return "probe_read_kernel";
	case BPF_FUNC_probe_read_kernel_str: return "probe_read_kernel_str";
	case BPF_FUNC_map_update_elem: return "map_update_elem";
	default: return "helper";
	}
}

/* The error code a site kept (its second slot): the one of any CPU. */
static int64_t events_site_error(struct event_loop *loop, uint32_t key)
{
	if (bpf_map_lookup_elem(loop->lost_fd, &key, loop->lost_values) != 0)
		return 0;
	for (int cpu = 0; cpu < loop->cpu_count; cpu++) {
		if (loop->lost_values[cpu])
			return (int64_t)loop->lost_values[cpu];
	}
	return 0;
}

/*
 * -k: helper calls that failed (a read of memory that faulted, an update a
 * full map refused), counted per call site by the programs. The first
 * failure at a site is reported with its place, as current bpftrace's -k
 * does: a located warning, or in JSON a helper_error record in the output;
 * at exit a site that failed more says how often.
 */
static void events_check_helper_errors(struct event_loop *loop, bool at_exit)
{
	const struct program *program = loop->program;
	const char *filename = program->source.filename ? program->source.filename : "stdin";
	struct diag diag;

	diag_init(&diag, &program->source, stderr);
	for (int site = 0; site < program->helper_sites.count; site++) {
		const struct helper_site *where = &program->helper_sites.items[site];
		uint32_t key = (uint32_t)(program->helper_slot_base + 2 * site);
		uint64_t total;

		if (!lost_slot_total(loop->lost_fd, key, loop->lost_values, loop->cpu_count, &total))
			continue;
		if (total > 0 && loop->helper_errors[site] == 0) {
			int64_t code = events_site_error(loop, key + 1);
			const char *name = events_helper_name(where->helper);
			const char *message = where->helper == BPF_FUNC_map_update_elem && code == -E2BIG
					      ? "the map is full" : strerror((int)-code);
			FILE *status = runtime_status_stream(loop->options, &loop->output);

			fflush(loop->output.file);
			if (loop->output.json) {
				struct strbuf json;
				strbuf_init(&json);
				strbuf_puts(&json, "{\"type\": \"helper_error\", \"msg\": ");
				format_json_string(&json, message, strlen(message));
				strbuf_printf(&json, ", \"helper\": \"%s\", \"retcode\": %lld, "
					      "\"filename\": ", name, (long long)code);
				format_json_string(&json, filename, strlen(filename));
				strbuf_printf(&json, ", \"line\": %d, \"col\": %d}\n", where->loc.line,
					      where->loc.column);
				fwrite(json.data, 1, json.length, status);
				fflush(status);
				strbuf_free(&json);
			} else {
				diag_warning(&diag, where->loc, "failed to %s: %s (%lld) (reported once; "
					     "counted until exit)", name, message, (long long)code);
			}
		}
		loop->helper_errors[site] = total;
		if (at_exit && total > 1)
			fprintf(stderr, "%s:%d:%d: note: %s failed %llu times here\n", filename,
				where->loc.line, where->loc.column, events_helper_name(where->helper),
				(unsigned long long)total);
	}
}

void event_loop_check_lost(struct event_loop *loop, bool at_exit)
{
	uint64_t now = monotonic_ns();
	uint64_t total = 0;

	skipped_runs_check(loop->skipped, at_exit, loop->output.file);
	if (loop->lost_fd < 0)
		return;
	if (!at_exit && now - loop->lost_checked_ns < EVENTS_LOST_INTERVAL_NS)
		return;
	loop->lost_checked_ns = now;
	events_check_zero_divisions(loop, at_exit);
	events_check_helper_errors(loop, at_exit);
	if (!lost_slot_total(loop->lost_fd, LOST_SLOT_EVENTS, loop->lost_values, loop->cpu_count,
			     &total))
		return;
	if (total > loop->lost_reported) {
		fflush(loop->output.file);
		print_lost(&loop->output, runtime_status_stream(loop->options, &loop->output),
			   total - loop->lost_reported);
		loop->lost_reported = total;
		loop->lost_reports++;
	}
	/* Several increments were reported along the way: end with the sum so
	 * the reader need not add them up. */
	if (at_exit && loop->lost_reports > 1)
		fprintf(stderr, "Lost %llu events in total\n", (unsigned long long)total);

	events_report_loss(loop, &loop->refused, at_exit, now);
	events_report_loss(loop, &loop->stacks, at_exit, now);
}

/* exit()'s map slot (LOST_SLOT_EXIT): code * 2 + 1 on a CPU that called it.
 * Only an exit whose ring record was not seen yet needs it. */
static void events_check_exit(struct event_loop *loop)
{
	uint32_t key = LOST_SLOT_EXIT;

	if (loop->lost_fd < 0 || loop->exit_requested ||
	    bpf_map_lookup_elem(loop->lost_fd, &key, loop->lost_values) != 0)
		return;
	for (int cpu = 0; cpu < loop->cpu_count; cpu++) {
		if (loop->lost_values[cpu] & 1) {
			loop->exit_requested = true;
			loop->exit_code = (int)((int64_t)loop->lost_values[cpu] >> 1);
			return;
		}
	}
}

int event_loop_poll(struct event_loop *loop, int timeout_ms)
{
	int handled = 0;

	if (loop->ring) {
		loop->batch_limited = true;
		loop->batch_deadline_ns = monotonic_ns() + (uint64_t)timeout_ms * 1000000ull +
					  loop->batch_budget_ns;
		handled = ring_buffer__poll(loop->ring, timeout_ms);
		loop->batch_limited = false;
		if (handled == EVENTS_BATCH_CUT)
			handled = 1;
	} else if (timeout_ms > 0) {
		struct timespec delay = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };

		if (nanosleep(&delay, NULL) != 0)
			handled = -errno;
	}
	if (handled != 0)
		fflush(loop->output.file);
	event_loop_check_lost(loop, false);
	events_check_exit(loop);
	return handled;
}

int event_loop_fd(const struct event_loop *loop)
{
	return loop->ring ? ring_buffer__epoll_fd(loop->ring) : -1;
}

void event_loop_set_batch_budget(struct event_loop *loop, uint64_t budget_ns)
{
	loop->batch_budget_ns = budget_ns;
}

void event_loop_set_stop_flag(struct event_loop *loop, const volatile sig_atomic_t *stop)
{
	loop->stop = stop;
}

/* consume() reads until the ring is empty, or until the record callback
 * cuts the batch (budget spent, stop signal); another call picks up what
 * was committed while the last was printing. */
static void events_consume(struct event_loop *loop, uint64_t budget_ns, bool limited)
{
	loop->batch_limited = limited;
	loop->batch_deadline_ns = monotonic_ns() + budget_ns;
	for (int round = 0; loop->ring && round < 64; round++) {
		if (ring_buffer__consume(loop->ring) <= 0)
			break;
	}
	loop->batch_limited = false;
}

void event_loop_drain(struct event_loop *loop)
{
	/* probes still attached could keep the ring full for ever */
	events_consume(loop, loop->batch_budget_ns, true);
	fflush(loop->output.file);
	events_check_exit(loop);
}

void event_loop_drain_last(struct event_loop *loop, bool stopped)
{
	if (!stopped) {
		/* nothing adds to the ring any more: all of it is printed */
		events_consume(loop, 0, false);
	} else {
		const volatile sig_atomic_t *stop = loop->stop;

		/* the stop signal has been seen: only the budget ends this */
		loop->stop = NULL;
		events_consume(loop, EVENTS_STOP_BUDGET_NS, true);
		loop->discarding = true;
		events_consume(loop, 0, false);
		loop->discarding = false;
		loop->stop = stop;
	}
	fflush(loop->output.file);
	events_check_exit(loop);
	if (loop->discarded) {
		fprintf(runtime_status_stream(loop->options, &loop->output),
			"sonde: %llu events were not printed: the run was stopped while they "
			"waited in the ring buffer\n", (unsigned long long)loop->discarded);
		loop->discarded = 0;
	}
}

int event_loop_finish_picture(struct event_loop *loop)
{
	return picture_finish(&loop->picture);
}

bool event_loop_exit_pending(struct event_loop *loop)
{
	events_check_exit(loop);
	return loop->exit_requested;
}

bool event_loop_exit_requested(const struct event_loop *loop, int *code)
{
	if (loop->exit_requested && code)
		*code = loop->exit_code;
	return loop->exit_requested;
}

void event_loop_resume_output(struct event_loop *loop)
{
	loop->muted = false;
}
