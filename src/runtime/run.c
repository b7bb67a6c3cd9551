/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The run: one compiled program from load to last line of output.
 *
 *   load maps and programs -> write the config map -> run BEGIN -> attach
 *   -> the banner -> BEGIN's output -> release the -c child
 *   -> consume events until something ends the run
 *   -> stop the probes -> hand the links to a releasing process -> run END
 *   -> print every map -> exit code
 *
 * BEGIN and END are not attached anywhere: they are raw-tracepoint programs
 * that the runtime runs itself with BPF_PROG_TEST_RUN, so BEGIN finishes
 * (and its records are in the ring, ahead of any other probe's) before any
 * other probe can fire, and END runs after every probe is stopped. Both see
 * the same maps as the rest.
 *
 * A run ends at the first of: an exit() record, SIGINT or SIGTERM, the end
 * of the -c child, the end of the -p target, or, for a program with nothing
 * but BEGIN and END, right after BEGIN.
 * SIGUSR1 does not end it: every map is printed then, as bpftrace 0.17
 * does, and the events go on.
 *
 * Everything attached is held by a file descriptor of this process (BPF
 * links and perf events), or at the end of the run of the sonde-release
 * process it hands them to (run_detach), so however sonde dies, the kernel
 * detaches it.
 */
#include "runtime/load.h"
#include "runtime/symbols.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probes/provider.h"
#include "serve/serve.h"

/* The raw-tracepoint context BEGIN and END run with: twelve zero arguments,
 * which covers any argument the verifier let them read. */
#define RUN_CONTEXT_ARGS 12
#define RUN_POLL_MS 100
/* While serving, a poll hands back to the scrapes after this long on records. */
#define RUN_SERVE_BATCH_NS 5000000ull

static volatile sig_atomic_t run_stop_signal;
/* SIGUSR1 asks for every map now, as bpftrace 0.17 prints them; the run goes on. */
static volatile sig_atomic_t run_maps_requested;

static void run_on_stop_signal(int signal_number)
{
	run_stop_signal = signal_number;
}

static void run_on_maps_signal(int signal_number)
{
	run_maps_requested = 1;
}

/* SIGCHLD only has to interrupt the wait for events; the state is read
 * with waitpid(). */
static void run_on_child(int signal_number)
{
}

struct run_state {
	struct program *program;
	const struct runtime_options *options;
	struct output output;
	struct output_sink sink;    /* under output.file: the first write error */
	struct event_loop *events;
	fd_list links;
	pid_t child_pid;        /* -c child still to reap; 0 once reaped */
	int child_release_fd;
	int target_pidfd;       /* -p target, when pidfd_open works; else -1 */
	struct sigaction saved[4];
	int refused;            /* wildcard-matched probes the kernel refused, skipped */
	struct server *server;  /* sonde serve; NULL otherwise */
	struct metrics *metrics;
	struct outfile output_target;  /* -o FILE, prepared before anything loads */
	struct outfile picture_target; /* --svg / --heatmap FILE, likewise */
};

static void run_install_signals(struct run_state *state)
{
	struct sigaction action;

	memset(&action, 0, sizeof(action));
	sigemptyset(&action.sa_mask);
	/* No SA_RESTART: the signal must cut the wait for events short. */
	action.sa_handler = run_on_stop_signal;
	sigaction(SIGINT, &action, &state->saved[0]);
	sigaction(SIGTERM, &action, &state->saved[1]);
	action.sa_handler = run_on_maps_signal;
	sigaction(SIGUSR1, &action, &state->saved[3]);
	action.sa_handler = run_on_child;
	action.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &action, &state->saved[2]);
}

static void run_restore_signals(struct run_state *state)
{
	sigaction(SIGINT, &state->saved[0], NULL);
	sigaction(SIGTERM, &state->saved[1], NULL);
	sigaction(SIGCHLD, &state->saved[2], NULL);
	sigaction(SIGUSR1, &state->saved[3], NULL);
}

static void run_raise_memlock(void)
{
	/* Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK; newer ones
	 * ignore it. Failure is harmless on those, and the load error says
	 * enough on the others. */
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };

	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	/* each attached function holds a program, a perf event and a link:
	 * a wildcard over hundreds of functions needs more than the usual 1024 */
	struct rlimit files;
	if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
	}
}

static int run_write_config(struct program *program)
{
	struct program_config config;
	uint32_t key = 0;
	const struct map_desc *map;

	if (program->config_map_id < 0 || program->config_map_id >= program->maps.count)
		return 0;
	map = &program->maps.items[program->config_map_id];
	memset(&config, 0, sizeof(config));
	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC. */
	config.start_ns = monotonic_ns();
	struct timespec real, boot;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	config.wall_offset_ns = (uint64_t)(((int64_t)real.tv_sec - boot.tv_sec) * 1000000000LL +
					   (real.tv_nsec - boot.tv_nsec));
	if (bpf_map_update_elem(map->fd, &key, &config, BPF_ANY) != 0) {
		fprintf(stderr, "sonde: cannot write the configuration map: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* Runs every program of the given role once, in program order. */
static int run_special_probes(struct run_state *state, enum probe_role role)
{
	uint64_t context[RUN_CONTEXT_ARGS];

	memset(context, 0, sizeof(context));
	for (int i = 0; i < state->program->probes.count; i++) {
		struct probe_program *probe = &state->program->probes.items[i];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = context,
			    .ctx_size_in = sizeof(context));

		if (probe->role != role)
			continue;
		if (bpf_prog_test_run_opts(probe->prog_fd, &opts) != 0) {
			fprintf(stderr, "sonde: cannot run probe %s: %s\n", probe->name,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* The warning names this many refused probes and counts the rest. */
#define RUN_REFUSED_NAMED 8

/* The order to attach probes in: the script's, except for probes whose
 * kernel runs the programs on one site last attached first (uprobes): they
 * come after the others, in reverse, so that several blocks on one function
 * run in the script's order, as in bpftrace. */
static int *run_attach_order(const struct program *program)
{
	int *order = xcalloc((size_t)program->probes.count + 1, sizeof(*order));
	int count = 0;

	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < program->probes.count; k++) {
			int i = pass ? program->probes.count - 1 - k : k;
			const struct probe_point *point = program->probes.items[i].point;
			bool reversed = point && point->provider->runs_last_attached_first;

			if (reversed == (pass == 1))
				order[count++] = i;
		}
	return order;
}

/* Attaches every normal probe. A probe named in full must attach or the run
 * fails; one of many a wildcard matched may be refused (some tracepoints
 * are not allowed for BPF), and is then skipped with a single warning. */
static int run_attach(struct run_state *state)
{
	struct strbuf refused_names;
	char *first_error = NULL;
	int refused = 0, wildcard_points = 0, attached = 0, result = 0;

	int *order = run_attach_order(state->program);

	strbuf_init(&refused_names);
	for (int n = 0; n < state->program->probes.count; n++) {
		struct probe_program *probe = &state->program->probes.items[order[n]];
		const struct provider *provider;
		char *error = NULL;

		if (probe->role != PROBE_ROLE_NORMAL)
			continue;
		provider = probe->point ? probe->point->provider : NULL;
		if (!provider || !provider->attach) {
			fprintf(stderr, "sonde: probe %s cannot be attached\n", probe->name);
			result = -1;
			break;
		}
		bool wildcard = probe->point->from_wildcard;
		wildcard_points += wildcard;
		if (provider->attach(probe->point, probe->prog_fd, &state->links, &error) == 0) {
			attached++;
			continue;
		}
		if (!error)
			error = xasprintf("cannot attach probe %s", probe->name);
		if (!wildcard) {
			fprintf(stderr, "sonde: %s\n", error);
			free(error);
			result = -1;
			break;
		}
		if (refused < RUN_REFUSED_NAMED)
			strbuf_printf(&refused_names, "%s%s", refused ? ", " : "", probe->name);
		refused++;
		if (!first_error)
			first_error = error;
		else
			free(error);
	}
	if (result == 0 && refused) {
		if (refused > RUN_REFUSED_NAMED)
			strbuf_printf(&refused_names, " and %d more", refused - RUN_REFUSED_NAMED);
		fprintf(stderr, "sonde: warning: the kernel refused %d of the %d probes matched by "
			"wildcards, skipped: %s (%s)\n", refused, wildcard_points, refused_names.data,
			first_error);
		state->refused = refused;
		if (attached == 0) {
			fprintf(stderr, "sonde: no probe could be attached\n");
			result = -1;
		}
	}
	strbuf_free(&refused_names);
	free(first_error);
	free(order);
	return result;
}

/* Switches every attached program off at once: each tests the config
 * map's `stopped` first. From here on the probes change no map and send
 * no event, however long the kernel takes to detach them. */
static void run_stop_probes(struct run_state *state)
{
	struct program *program = state->program;
	struct program_config config;
	uint32_t key = 0;
	int fd;

	if (program->config_map_id < 0 || program->config_map_id >= program->maps.count)
		return;
	fd = program->maps.items[program->config_map_id].fd;
	if (fd < 0 || bpf_map_lookup_elem(fd, &key, &config) != 0)
		return;
	config.stopped = 1;
	bpf_map_update_elem(fd, &key, &config, BPF_ANY);
}

/* In the releasing process: everything but the links goes (the terminal
 * and pipes first, so that no reader waits for this process), then the
 * links one by one. */
static void run_release_links_and_exit(const fd_list *links)
{
	int null_fd = open("/dev/null", O_RDWR);
	int highest = 2;

	if (null_fd >= 0) {
		for (int fd = 0; fd < 3; fd++)
			dup2(null_fd, fd);
	}
	/* Ctrl-C on the terminal that started sonde is not for this process */
	setsid();
	prctl(PR_SET_NAME, "sonde-release");
	for (int i = 0; i < links->count; i++)
		highest = links->items[i] > highest ? links->items[i] : highest;
	bool *keep = calloc((size_t)highest + 1, sizeof(*keep));
	for (int i = 0; keep && i < links->count; i++)
		keep[links->items[i]] = true;
	for (int fd = 3; keep && fd <= highest; fd++) {
		if (!keep[fd])
			close(fd);
	}
	close_range((unsigned)highest + 1, ~0u, 0);
	for (int i = 0; i < links->count; i++)
		close(links->items[i]);
	_exit(0);
}

/*
 * Detaching is slow: closing a tracepoint's perf event waits for an RCU
 * grace period under a global mutex, some 50 ms each, 19 s for the 361
 * syscalls:sys_enter_* tracepoints. The programs are already switched off
 * (run_stop_probes), so nobody needs to wait for that: a child process
 * inherits the links, this process drops its own copies (cheap, since the
 * child still holds them) and goes on to END and the maps. The child
 * closes the links and exits. Whatever happens to either process, every
 * link is held by a descriptor of a live process or closed by the kernel
 * when that process dies, so nothing stays attached after both are gone.
 * Without fork, or for nothing attached, the links are closed here.
 */
static void run_detach(struct run_state *state)
{
	pid_t releaser = state->links.count > 0 ? fork() : -1;

	if (releaser == 0)
		run_release_links_and_exit(&state->links);
	for (int i = 0; i < state->links.count; i++)
		close(state->links.items[i]);
	state->links.count = 0;
}

/* Lets the -c child exec (a byte), or tells it to give up (end of file). */
static void run_release_child(struct run_state *state, bool go)
{
	if (state->child_release_fd < 0)
		return;
	if (go) {
		ssize_t written;

		do
			written = write(state->child_release_fd, "g", 1);
		while (written < 0 && errno == EINTR);
	}
	close(state->child_release_fd);
	state->child_release_fd = -1;
}

static bool run_child_exited(struct run_state *state)
{
	int status;

	if (state->child_pid <= 0)
		return false;
	if (waitpid(state->child_pid, &status, WNOHANG) == state->child_pid) {
		state->child_pid = 0;
		return true;
	}
	return false;
}

/* Ends a -c child that outlived the run, as bpftrace does, and reaps it. */
static void run_end_child(struct run_state *state)
{
	int status;

	run_release_child(state, false);
	if (state->child_pid <= 0)
		return;
	if (waitpid(state->child_pid, &status, WNOHANG) == 0) {
		kill(state->child_pid, SIGTERM);
		while (waitpid(state->child_pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	state->child_pid = 0;
}

static void run_open_target(struct run_state *state)
{
	state->target_pidfd = -1;
#ifdef SYS_pidfd_open
	if (state->options->target_pid > 0)
		state->target_pidfd = (int)syscall(SYS_pidfd_open, state->options->target_pid, 0);
#endif
}

static bool run_target_gone(struct run_state *state)
{
	pid_t pid = state->options->target_pid;

	if (pid <= 0)
		return false;
	if (state->target_pidfd >= 0) {
		/* A pidfd turns readable when the process exits, zombie or not. */
		struct pollfd pfd = { state->target_pidfd, POLLIN, 0 };

		return poll(&pfd, 1, 0) > 0;
	}
	return kill(pid, 0) != 0 && errno == ESRCH;
}

static bool run_has_normal_probes(const struct program *program)
{
	for (int i = 0; i < program->probes.count; i++) {
		if (program->probes.items[i].role == PROBE_ROLE_NORMAL)
			return true;
	}
	return false;
}

/*
 * One round of sonde serve's loop: wait on the ring buffer and the
 * server's sockets at once, then take the records (at most
 * RUN_SERVE_BATCH_NS of them, so a scrape waits no longer) and do what the
 * sockets allow, which never blocks.
 */
static int run_serve_round(struct run_state *state)
{
	struct pollfd fds[SERVE_MAX_FDS + 1];
	int count = 0, ring_fd = event_loop_fd(state->events);

	if (ring_fd >= 0)
		fds[count++] = (struct pollfd){ ring_fd, POLLIN, 0 };
	int first = count;
	count += server_poll_fds(state->server, fds + first);
	if (poll(fds, (nfds_t)count, server_timeout_ms(state->server, RUN_POLL_MS)) < 0 &&
	    errno != EINTR)
		return -errno;
	int handled = event_loop_poll(state->events, 0);
	server_handle(state->server, fds + first, count - first);
	return handled;
}

static int run_compare_maps(const void *a, const void *b)
{
	const struct map_desc *const *left = a;
	const struct map_desc *const *right = b;

	return strcmp((*left)->name, (*right)->name);
}

/*
 * At exit bpftrace prints two newlines, then every map sorted by name; on
 * SIGUSR1 the maps alone. (bpftrace 0.17 writes the newlines to stdout even
 * with -o FILE; sonde keeps all of a program's output in one place, so
 * stdout stays empty.)
 */
static void run_print_maps(struct run_state *state, bool at_exit)
{
	const struct map_desc **maps;
	int count = 0;

	if (at_exit)
		fputs("\n\n", state->output.file);
	maps = xcalloc((size_t)state->program->maps.count + 1, sizeof(*maps));
	for (int i = 0; i < state->program->maps.count; i++) {
		const struct map_desc *map = &state->program->maps.items[i];

		if (map->role == MAP_ROLE_USER && map->fd >= 0)
			maps[count++] = map;
	}
	qsort(maps, (size_t)count, sizeof(*maps), run_compare_maps);
	for (int i = 0; i < count; i++)
		print_map(&state->output, maps[i], 0, 0);
	free(maps);
	fflush(state->output.file);
}

/* Consumes events until something ends the run. */
static void run_wait(struct run_state *state)
{
	bool waits_for_process = state->options->child_pid > 0 || state->options->target_pid > 0;

	/* a served program runs until it is stopped, probes or not */
	if (!run_has_normal_probes(state->program) && !waits_for_process && !state->server)
		return;
	for (;;) {
		int handled;

		if (event_loop_exit_requested(state->events, NULL) || run_stop_signal ||
		    state->sink.error)
			return;
		if (run_child_exited(state) || run_target_gone(state))
			return;
		if (run_maps_requested) {
			run_maps_requested = 0;
			/* what the probes printed so far comes first; a tool
			 * prints what it means to, and only that */
			event_loop_drain(state->events);
			if (!state->options->no_exit_maps)
				run_print_maps(state, false);
		}
		if (state->server)
			handled = run_serve_round(state);
		else
			handled = event_loop_poll(state->events, RUN_POLL_MS);
		if (handled < 0 && handled != -EINTR) {
			fprintf(stderr, "sonde: reading events failed: %s\n", strerror(-handled));
			return;
		}
	}
}

/* Decides how -o's and the picture's files are written, and refuses what
 * cannot be, before anything is loaded (outfile.h). 0, or -1 after saying
 * why. */
static int run_prepare_files(struct run_state *state)
{
	const struct runtime_options *options = state->options;
	const char *paths[] = { options->output_path,
				options->picture.kind != PICTURE_NONE ? options->picture.path : NULL };
	const char *names[] = { "-o", options->picture.kind == PICTURE_FLAMEGRAPH ? "--svg"
								: "--heatmap" };
	struct outfile *targets[] = { &state->output_target, &state->picture_target };

	for (int i = 0; i < 2; i++) {
		char *message = NULL;

		if (!paths[i])
			continue;
		if (outfile_prepare(targets[i], paths[i], &message) < 0) {
			fprintf(stderr, "sonde: %s %s: %s\n", names[i], paths[i], message);
			free(message);
			return -1;
		}
	}
	return 0;
}

/* Where the program's output goes: -o FILE is opened (and truncated) only
 * now that the programs have loaded, so a program that fails to load leaves
 * the file as it was. */
static int run_open_output(struct run_state *state)
{
	const char *path = state->options->output_path;
	int fd = STDOUT_FILENO;

	if (path) {
		fd = outfile_open_stream(&state->output_target);
		if (fd < 0) {
			fprintf(stderr, "sonde: cannot open -o %s: %s\n", path, strerror(-fd));
			return -1;
		}
	}
	fflush(stdout);
	state->output.file = output_sink_open(&state->sink, fd, path != NULL);
	if (!state->output.file) {
		fprintf(stderr, "sonde: cannot set up the output: %s\n", strerror(errno));
		if (path)
			close(fd);
		return -1;
	}
	return 0;
}

/* Flushes and closes the output; says once what failed if a write did.
 * Returns 0, or -1 after a failed write. */
static int run_close_output(struct run_state *state)
{
	if (!state->output.file)
		return 0;
	fclose(state->output.file);
	state->output.file = NULL;
	if (!state->sink.error)
		return 0;
	fprintf(stderr, "sonde: writing to %s failed: %s\n",
		state->options->output_path ? state->options->output_path : "stdout",
		strerror(state->sink.error));
	return -1;
}

static void run_cleanup(struct run_state *state)
{
	run_stop_probes(state);
	run_detach(state);
	free(state->links.items);
	state->links.items = NULL;
	run_end_child(state);
	if (state->target_pidfd >= 0)
		close(state->target_pidfd);
	state->target_pidfd = -1;
	event_loop_free(state->events);
	state->events = NULL;
	server_free(state->server);
	state->server = NULL;
	metrics_free(state->metrics);
	state->metrics = NULL;
	symbols_set_stack_map(-1, -1);
	symbols_free();
	load_close(state->program);
	run_close_output(state);
	outfile_close(&state->output_target);
	outfile_close(&state->picture_target);
	run_restore_signals(state);
}

static int run_serve_listen(struct run_state *state)
{
	char *error = NULL;

	if (server_new(state->options->serve, &state->server, &error) < 0) {
		fprintf(stderr, "sonde: serve: %s\n", error);
		free(error);
		return -1;
	}
	return 0;
}

/* The metric families of the loaded maps; the maps left out are named. */
static int run_serve_metrics(struct run_state *state)
{
	struct strbuf skipped;
	char *error = NULL;
	int err;

	strbuf_init(&skipped);
	err = metrics_new(state->program, state->options->serve, &state->metrics, &skipped, &error);
	if (err < 0) {
		fprintf(stderr, "sonde: serve: %s\n", error);
		free(error);
	} else if (skipped.length) {
		for (char *line = skipped.data, *end; *line; line = end + 1) {
			end = strchr(line, '\n');
			fprintf(stderr, "sonde: serve: %.*s\n", (int)(end - line), line);
		}
	}
	strbuf_free(&skipped);
	return err < 0 ? -1 : 0;
}

FILE *runtime_status_stream(const struct runtime_options *options, const struct output *out)
{
	return out->json && !options->status_on_stderr && out->file ? out->file : stderr;
}

int runtime_run(struct program *program, const struct runtime_options *options)
{
	struct run_state state;
	int exit_code = 0;

	memset(&state, 0, sizeof(state));
	state.output_target.fd = -1;
	state.picture_target.fd = -1;
	state.program = program;
	state.options = options;
	state.output.json = options->json;
	state.child_pid = options->child_pid;
	state.child_release_fd = options->child_release_fd;
	state.target_pidfd = -1;
	run_stop_signal = 0;
	run_maps_requested = 0;
	run_install_signals(&state);

	run_raise_memlock();
	/* the port and the files first: a busy one or one that cannot be
	 * written is said before anything is loaded */
	if (run_prepare_files(&state) < 0)
		goto fail;
	if (options->serve && !options->dry_run && run_serve_listen(&state) < 0)
		goto fail;
	if (load_program(program, options->verbose) < 0)
		goto fail;
	if (options->serve && run_serve_metrics(&state) < 0)
		goto fail;
	for (int i = 0; i < program->maps.count; i++) {
		const struct map_desc *map = &program->maps.items[i];
		if (map->role == MAP_ROLE_STACKS)
			symbols_set_stack_map((int)(map->value_size / 8), map->fd);
	}
	if (run_write_config(program) < 0 || run_open_output(&state) < 0)
		goto fail;
	if (options->dry_run) {
		run_cleanup(&state);
		return 0;
	}
	state.events = event_loop_new(program, options, state.output.file, &state.picture_target);
	if (!state.events)
		goto fail;
	event_loop_set_stop_flag(state.events, &run_stop_signal);
	run_open_target(&state);

	/* BEGIN runs before anything is attached, but its records wait in the
	 * ring until the banner is out: the banner comes first, as in current
	 * bpftrace (and in 0.17's JSON), and the probes' records after BEGIN's. */
	if (run_special_probes(&state, PROBE_ROLE_BEGIN) < 0)
		goto fail;
	/* exit() in BEGIN: nothing else needs attaching. The banner still
	 * appears, as bpftrace's does, for whoever waits for it. */
	if (!event_loop_exit_pending(state.events) && run_attach(&state) < 0)
		goto fail;
	if (!options->quiet)
		print_attached(&state.output, runtime_status_stream(options, &state.output),
			       program->probes.count - state.refused);
	event_loop_drain(state.events);
	if (state.sink.error)
		goto fail;
	if (state.server) {
		event_loop_set_batch_budget(state.events, RUN_SERVE_BATCH_NS);
		server_set_metrics(state.server, state.metrics);
		fprintf(stderr, "Serving metrics on %s://%s/metrics\n", server_scheme(state.server),
			server_address(state.server));
	}
	run_release_child(&state, true);

	run_wait(&state);

	/* Stop first so that END sees maps no probe is still changing; then
	 * take what the probes left in the ring (consumed silently after
	 * exit(), printed otherwise). */
	run_stop_probes(&state);
	run_detach(&state);
	event_loop_drain_last(state.events, run_stop_signal != 0);
	event_loop_exit_requested(state.events, &exit_code);
	/* After a failed write the run stops: END and the maps would only
	 * fail the same way. */
	if (!state.sink.error) {
		event_loop_resume_output(state.events);
		if (run_special_probes(&state, PROBE_ROLE_END) < 0)
			exit_code = 1;
		event_loop_drain_last(state.events, false);
	}
	event_loop_check_lost(state.events, true);
	/* SONDE_PRINT_MAPS_ON_EXIT, else the config block's print_maps_on_exit */
	int print_maps = options->print_maps_on_exit ? options->print_maps_on_exit
			 : program->settings.print_maps_on_exit;
	if (!options->no_exit_maps && print_maps >= 0 && !state.sink.error)
		run_print_maps(&state, true);
	if (event_loop_finish_picture(state.events) < 0)
		exit_code = 1;
	if (run_close_output(&state) < 0)
		exit_code = 1;
	run_cleanup(&state);
	return exit_code;
fail:
	run_close_output(&state);
	run_cleanup(&state);
	return 1;
}
