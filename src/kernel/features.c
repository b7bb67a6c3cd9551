/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Feature probing. Every question is answered by doing the smallest real
 * version of the thing: load a two-instruction program of the right type,
 * open the perf event, attach, then close everything. The kernel's answer
 * (and its errno) becomes the reason shown by --info and in error messages.
 *
 * Probes that attach something (a tracepoint, a kprobe, a uprobe) detach it
 * again before returning, so probing leaves nothing behind.
 */
#include "features.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../common/util.h"
#include "attach.h"
#include "btf.h"
#include "pmu.h"
#include "procmaps.h"
#include "tracefs.h"

/* A kernel function present in every configuration, to aim test kprobes and
 * fentry programs at. */
#define PROBE_KERNEL_FUNCTION "vfs_read"

struct feature_state {
	bool probed;
	bool available;
	int err;             /* -errno of the failed step */
	char reason[200];
};

static struct feature_state states[FEATURE_COUNT];

static const char *const feature_names[FEATURE_COUNT] = {
	[FEATURE_BPF_SYSCALL] = "bpf syscall",
	[FEATURE_RINGBUF] = "ring buffer map",
	[FEATURE_BTF] = "kernel BTF",
	[FEATURE_TRACEFS] = "tracefs",
	[FEATURE_TRACEPOINT] = "tracepoint",
	[FEATURE_RAW_TRACEPOINT] = "rawtracepoint",
	[FEATURE_PERF_SOFTWARE] = "software",
	[FEATURE_CPU_CLOCK] = "profile/interval (cpu-clock)",
	[FEATURE_PERF_LINK] = "bpf_link for perf events",
	[FEATURE_KPROBE] = "kprobe",
	[FEATURE_KPROBE_MULTI] = "kprobe_multi",
	[FEATURE_UPROBE] = "uprobe",
	[FEATURE_UPROBE_MULTI] = "uprobe_multi",
	[FEATURE_FENTRY] = "fentry",
	[FEATURE_HARDWARE] = "hardware",
	[FEATURE_TEST_RUN] = "BEGIN/END",
	[FEATURE_HASH_ON_DEMAND] = "hash maps allocated on demand",
};

const char *feature_name(enum feature feature)
{
	return feature_names[feature];
}

/* ---- small programs ---- */

/* r0 = 0; exit */
static const struct bpf_insn return_zero[] = {
	{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
	{ .code = BPF_JMP | BPF_EXIT },
};

static int load_program(enum bpf_prog_type type, enum bpf_attach_type attach_type,
			uint32_t attach_btf_id, const struct bpf_insn *insns, size_t count,
			char *log, size_t log_size)
{
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.expected_attach_type = attach_type,
		.attach_btf_id = attach_btf_id,
		.log_buf = log,
		.log_size = (uint32_t)log_size,
		.log_level = log ? 1 : 0,
	);
	int fd = bpf_prog_load(type, "sonde_probe", "GPL", insns, count, &opts);
	return fd < 0 ? -errno : fd;
}

static int load_trivial(enum bpf_prog_type type)
{
	return load_program(type, 0, 0, return_zero, 2, NULL, 0);
}

static void close_fds(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

/* ---- the probes ---- */

typedef bool (*probe_fn)(struct feature_state *state);

static bool fail(struct feature_state *state, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static bool fail(struct feature_state *state, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(state->reason, sizeof(state->reason), fmt, ap);
	va_end(ap);
	state->err = err;
	return false;
}

static bool probe_bpf_syscall(struct feature_state *state)
{
	int fd = load_trivial(BPF_PROG_TYPE_TRACEPOINT);

	if (fd >= 0) {
		close(fd);
		return true;
	}
	if (fd == -EPERM || fd == -EACCES)
		return fail(state, fd, "%s", FEATURES_ROOT_MESSAGE);
	if (fd == -ENOSYS)
		return fail(state, fd, "this kernel was built without the bpf() system call "
				       "(CONFIG_BPF_SYSCALL)");
	return fail(state, fd, "loading a test BPF program failed: %s", strerror(-fd));
}

static bool probe_ringbuf(struct feature_state *state)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "sonde_probe", 0, 0,
				(uint32_t)sysconf(_SC_PAGESIZE), NULL);
	if (fd < 0)
		return fail(state, -errno, "creating a ring buffer map failed: %s", strerror(errno));
	close(fd);
	return true;
}

static bool probe_btf(struct feature_state *state)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) < 0)
		return fail(state, -errno, "/sys/kernel/btf/vmlinux: %s", strerror(errno));
	return true;
}

static bool probe_tracefs(struct feature_state *state)
{
	const char *root;
	char *error = NULL;
	int err = tracefs_require(&root, &error);

	if (err) {
		fail(state, err, "%s", error);
		free(error);
		return false;
	}
	return true;
}

/* Whether the attempt can even start; fills in the reason if not. */
static bool require(struct feature_state *state, enum feature needed)
{
	if (feature_available(needed))
		return true;
	return fail(state, states[needed].err, "needs %s: %s", feature_name(needed),
		    states[needed].reason);
}

static bool probe_tracepoint(struct feature_state *state)
{
	static const char *const candidates[][2] = {
		{ "syscalls", "sys_enter_getpid" },
		{ "raw_syscalls", "sys_enter" },
		{ "sched", "sched_switch" },
	};
	struct tracepoint_format format = { 0 };
	struct perf_event_attr attr = { 0 };
	char *error = NULL;
	const char *step = NULL;
	int prog_fd, fds[2], err = -ENOENT;

	if (!require(state, FEATURE_BPF_SYSCALL) || !require(state, FEATURE_TRACEFS))
		return false;
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		free(error);
		error = NULL;
		err = tracefs_read_format(candidates[i][0], candidates[i][1], &format, &error);
		if (err == 0)
			break;
	}
	if (err) {
		fail(state, err, "%s", error);
		free(error);
		return false;
	}
	tracepoint_format_free(&format);

	prog_fd = load_trivial(BPF_PROG_TYPE_TRACEPOINT);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a tracepoint program failed: %s",
			    strerror(-prog_fd));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = (uint64_t)format.id;
	attr.sample_period = 1;
	err = perf_event_attach(&attr, 0, prog_fd, 0, fds, &step);
	close(prog_fd);
	if (err)
		return fail(state, err, "%s failed: %s", step, strerror(-err));
	close_fds(fds);
	return true;
}

static bool probe_raw_tracepoint(struct feature_state *state)
{
	int prog_fd, fd;

	if (!require(state, FEATURE_BPF_SYSCALL))
		return false;
	prog_fd = load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a raw tracepoint program failed: %s",
			    strerror(-prog_fd));
	fd = bpf_raw_tracepoint_open("sched_switch", prog_fd);
	if (fd < 0) {
		int err = -errno;
		close(prog_fd);
		return fail(state, err, "BPF_RAW_TRACEPOINT_OPEN failed: %s", strerror(-err));
	}
	close(fd);
	close(prog_fd);
	return true;
}

static bool probe_perf_software(struct feature_state *state)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	};
	/* System-wide (pid -1), the way the software provider opens them. */
	int fd = perf_event_open_fd(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return fail(state, fd, "perf_event_open failed: %s", strerror(-fd));
	close(fd);
	return true;
}

static bool probe_cpu_clock(struct feature_state *state)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000,
	};
	const char *step = NULL;
	int prog_fd, fds[2], err;

	if (!require(state, FEATURE_BPF_SYSCALL))
		return false;
	prog_fd = load_trivial(BPF_PROG_TYPE_PERF_EVENT);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a perf event program failed: %s",
			    strerror(-prog_fd));
	err = perf_event_attach(&attr, 0, prog_fd, 0, fds, &step);
	close(prog_fd);
	if (err)
		return fail(state, err, "%s failed: %s", step, strerror(-err));
	close_fds(fds);
	return true;
}

static bool probe_perf_link(struct feature_state *state)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000000000,
		.disabled = 1,
	};
	int prog_fd, perf_fd, link_fd, err;

	if (!require(state, FEATURE_BPF_SYSCALL))
		return false;
	perf_fd = perf_event_open_fd(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (perf_fd < 0)
		return fail(state, perf_fd, "perf_event_open failed: %s", strerror(-perf_fd));
	prog_fd = load_trivial(BPF_PROG_TYPE_PERF_EVENT);
	if (prog_fd < 0) {
		close(perf_fd);
		return fail(state, prog_fd, "loading a perf event program failed: %s",
			    strerror(-prog_fd));
	}
	link_fd = bpf_link_create(prog_fd, perf_fd, BPF_PERF_EVENT, NULL);
	err = link_fd < 0 ? -errno : 0;
	close(prog_fd);
	close(perf_fd);
	if (err)
		return fail(state, err, "bpf_link_create failed: %s", strerror(-err));
	close(link_fd);
	return true;
}

static bool probe_kprobe(struct feature_state *state)
{
	int type = pmu_type("kprobe");
	struct perf_event_attr attr = { 0 };
	int fd;

	if (type < 0)
		return fail(state, -EOPNOTSUPP, "the kernel has no kprobe PMU; it was "
						"probably built without CONFIG_KPROBES");
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)PROBE_KERNEL_FUNCTION;
	fd = perf_event_open_fd(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fail(state, fd, "a kprobe on " PROBE_KERNEL_FUNCTION " failed: %s",
			    strerror(-fd));
	close(fd);
	return true;
}

static bool probe_kprobe_multi(struct feature_state *state)
{
	const char *symbols[] = { PROBE_KERNEL_FUNCTION };
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	int prog_fd, link_fd, err;

	if (!require(state, FEATURE_BPF_SYSCALL) || !require(state, FEATURE_KPROBE))
		return false;
	prog_fd = load_program(BPF_PROG_TYPE_KPROBE, BPF_TRACE_KPROBE_MULTI, 0, return_zero, 2,
			       NULL, 0);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a kprobe_multi program failed: %s",
			    strerror(-prog_fd));
	opts.kprobe_multi.syms = symbols;
	opts.kprobe_multi.cnt = 1;
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_KPROBE_MULTI, &opts);
	err = link_fd < 0 ? -errno : 0;
	close(prog_fd);
	if (err)
		return fail(state, err, "bpf_link_create failed: %s", strerror(-err));
	close(link_fd);
	return true;
}

/* Never called: the test uprobe goes on its first instruction. */
__attribute__((noinline, used)) static void features_uprobe_target(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Finds the file and file offset that hold address, from /proc/self/maps. */
static bool address_to_file_offset(uintptr_t address, char *path, size_t path_size,
				   uint64_t *offset)
{
	proc_mapping_list maps = { 0 };
	bool found = false;

	if (proc_maps_read(0, &maps) < 0)
		return false;
	for (int i = 0; i < maps.count && !found; i++) {
		const struct proc_mapping *mapping = &maps.items[i];
		if (address < mapping->start || address >= mapping->end || mapping->path[0] != '/')
			continue;
		snprintf(path, path_size, "%s", mapping->path);
		*offset = address - mapping->start + mapping->offset;
		found = true;
	}
	proc_maps_free(&maps);
	return found;
}

static bool probe_uprobe(struct feature_state *state)
{
	int type = pmu_type("uprobe");
	struct perf_event_attr attr = { 0 };
	char path[4096];
	uint64_t offset;
	int fd;

	if (type < 0)
		return fail(state, -EOPNOTSUPP, "the kernel has no uprobe PMU; it was "
						"probably built without CONFIG_UPROBE_EVENTS");
	if (!address_to_file_offset((uintptr_t)&features_uprobe_target, path, sizeof(path),
				    &offset))
		return fail(state, -ENOENT, "cannot find sonde's own code in /proc/self/maps");
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	/* Only this process, so no other program ever hits the breakpoint. */
	fd = perf_event_open_fd(&attr, getpid(), -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return fail(state, fd, "a uprobe on sonde itself failed: %s", strerror(-fd));
	close(fd);
	return true;
}

static bool probe_uprobe_multi(struct feature_state *state)
{
	char path[4096];
	uint64_t offset, cookie = 0;
	int prog_fd, link_fd;

	if (!require(state, FEATURE_BPF_SYSCALL) || !require(state, FEATURE_UPROBE))
		return false;
	if (!address_to_file_offset((uintptr_t)&features_uprobe_target, path, sizeof(path),
				    &offset))
		return fail(state, -ENOENT, "cannot find sonde's own code in /proc/self/maps");
	prog_fd = load_program(BPF_PROG_TYPE_KPROBE, ATTACH_TRACE_UPROBE_MULTI, 0, return_zero, 2,
			       NULL, 0);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a uprobe_multi program failed: %s",
			    strerror(-prog_fd));
	link_fd = uprobe_multi_link_create(prog_fd, path, &offset, &cookie, 1, false, getpid());
	close(prog_fd);
	if (link_fd < 0)
		return fail(state, link_fd, "a uprobe_multi link on sonde itself failed: %s",
			    strerror(-link_fd));
	close(link_fd);
	return true;
}

static bool probe_fentry(struct feature_state *state)
{
	int id, btf_obj_fd, prog_fd, link_fd, err;
	char log[4096] = "";

	if (!require(state, FEATURE_BPF_SYSCALL) || !require(state, FEATURE_BTF))
		return false;
	/* the BTF sonde has loaded anyway: reading it again costs tens of ms */
	if (btf_function_id(PROBE_KERNEL_FUNCTION, &id, &btf_obj_fd) < 0 || btf_obj_fd != 0)
		return fail(state, -ENOENT, "kernel BTF has no function " PROBE_KERNEL_FUNCTION);
	prog_fd = load_program(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, (uint32_t)id, return_zero,
			       2, log, sizeof(log));
	if (prog_fd < 0) {
		char *newline = strchr(log, '\n');
		if (newline)
			*newline = '\0';
		if (log[0])
			return fail(state, prog_fd, "loading an fentry program failed: %s (%s)",
				    strerror(-prog_fd), log);
		return fail(state, prog_fd, "loading an fentry program failed: %s",
			    strerror(-prog_fd));
	}
	link_fd = bpf_link_create(prog_fd, 0, BPF_TRACE_FENTRY, NULL);
	err = link_fd < 0 ? -errno : 0;
	close(prog_fd);
	if (err)
		return fail(state, err, "attaching an fentry program failed: %s", strerror(-err));
	close(link_fd);
	return true;
}

static bool probe_hardware(struct feature_state *state)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CPU_CYCLES,
	};
	int fd = perf_event_open_fd(&attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd == -ENOENT || fd == -EOPNOTSUPP)
		return fail(state, fd, "no hardware performance counters, as is usual in "
				       "virtual machines");
	if (fd < 0)
		return fail(state, fd, "perf_event_open of cpu cycles failed: %s", strerror(-fd));
	close(fd);
	return true;
}

/* BEGIN and END programs are run once by BPF_PROG_TEST_RUN, never attached. */
static bool probe_test_run(struct feature_state *state)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int prog_fd, err;

	if (!require(state, FEATURE_BPF_SYSCALL))
		return false;
	prog_fd = load_trivial(BPF_PROG_TYPE_RAW_TRACEPOINT);
	if (prog_fd < 0)
		return fail(state, prog_fd, "loading a raw tracepoint program failed: %s",
			    strerror(-prog_fd));
	err = bpf_prog_test_run_opts(prog_fd, &opts) < 0 ? -errno : 0;
	close(prog_fd);
	if (err)
		return fail(state, err, "BPF_PROG_TEST_RUN failed: %s", strerror(-err));
	return true;
}

/* A hash map made with BPF_F_NO_PREALLOC takes its elements as they are
 * inserted instead of allocating every one when it is created. Kernels
 * before 6.1 refuse such maps in perf_event (profile) programs, the
 * strictest case, so that is what is tried: a lookup from one. */
static bool probe_hash_on_demand(struct feature_state *state)
{
	LIBBPF_OPTS(bpf_map_create_opts, map_opts, .map_flags = BPF_F_NO_PREALLOC);
	int map_fd, prog_fd;

	if (!require(state, FEATURE_BPF_SYSCALL))
		return false;
	map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "sonde_probe", 8, 8, 1, &map_opts);
	if (map_fd < 0)
		return fail(state, -errno, "creating a hash map without preallocation failed: %s",
			    strerror(errno));
	const struct bpf_insn lookup[] = {
		/* *(u64 *)(r10 - 8) = 0; r2 = r10 - 8; r1 = map; call lookup */
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	prog_fd = load_program(BPF_PROG_TYPE_PERF_EVENT, 0, 0, lookup,
			       sizeof(lookup) / sizeof(lookup[0]), NULL, 0);
	close(map_fd);
	if (prog_fd < 0)
		return fail(state, prog_fd, "a perf_event program refused a hash map without "
					    "preallocation: %s", strerror(-prog_fd));
	close(prog_fd);
	return true;
}

static const probe_fn probes[FEATURE_COUNT] = {
	[FEATURE_BPF_SYSCALL] = probe_bpf_syscall,
	[FEATURE_RINGBUF] = probe_ringbuf,
	[FEATURE_BTF] = probe_btf,
	[FEATURE_TRACEFS] = probe_tracefs,
	[FEATURE_TRACEPOINT] = probe_tracepoint,
	[FEATURE_RAW_TRACEPOINT] = probe_raw_tracepoint,
	[FEATURE_PERF_SOFTWARE] = probe_perf_software,
	[FEATURE_CPU_CLOCK] = probe_cpu_clock,
	[FEATURE_PERF_LINK] = probe_perf_link,
	[FEATURE_KPROBE] = probe_kprobe,
	[FEATURE_KPROBE_MULTI] = probe_kprobe_multi,
	[FEATURE_UPROBE] = probe_uprobe,
	[FEATURE_UPROBE_MULTI] = probe_uprobe_multi,
	[FEATURE_FENTRY] = probe_fentry,
	[FEATURE_HARDWARE] = probe_hardware,
	[FEATURE_TEST_RUN] = probe_test_run,
	[FEATURE_HASH_ON_DEMAND] = probe_hash_on_demand,
};

/* SONDE_DISABLE_FEATURES=kprobe,fentry makes sonde behave as on a kernel
 * without them: how the fallbacks between probe families are tested on
 * kernels that have both. Names are those --info prints. */
static bool feature_disabled_by_environment(enum feature feature)
{
	const char *list = getenv("SONDE_DISABLE_FEATURES");
	const char *name = feature_names[feature];
	if (!list || !name)
		return false;
	size_t length = strlen(name);
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ',');
		size_t item = end ? (size_t)(end - p) : strlen(p);
		if (item == length && strncmp(p, name, length) == 0)
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

bool feature_available(enum feature feature)
{
	struct feature_state *state = &states[feature];

	if (!state->probed) {
		/* Marked first, so a probe that requires another cannot loop. */
		state->probed = true;
		if (feature_disabled_by_environment(feature)) {
			snprintf(state->reason, sizeof(state->reason),
				 "disabled by SONDE_DISABLE_FEATURES");
			state->available = false;
			return false;
		}
		state->available = probes[feature](state);
		if (state->available)
			state->reason[0] = '\0';
	}
	return state->available;
}

const char *feature_reason(enum feature feature)
{
	feature_available(feature);
	return states[feature].reason;
}

int features_check_bpf(char **error)
{
	if (feature_available(FEATURE_BPF_SYSCALL))
		return 0;
	*error = xstrdup(states[FEATURE_BPF_SYSCALL].reason);
	return states[FEATURE_BPF_SYSCALL].err ? states[FEATURE_BPF_SYSCALL].err : -EPERM;
}

bool feature_has_helper(enum bpf_prog_type prog_type, enum bpf_func_id helper)
{
	const struct bpf_insn call[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = helper },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	int fd;

	fd = load_program(prog_type, 0, 0, call, 3, log, sizeof(log));
	if (fd >= 0) {
		close(fd);
		return true;
	}
	/* The call has garbage arguments, so a known helper fails too, but for
	 * its arguments; only these messages mean the helper itself is missing. */
	return !strstr(log, "invalid func") && !strstr(log, "unknown func") &&
	       !strstr(log, "cannot use helper") && log[0] != '\0';
}

/* ---- --info ---- */

static void print_feature(FILE *out, enum feature feature)
{
	if (feature_available(feature))
		fprintf(out, "  %s: available\n", feature_name(feature));
	else
		fprintf(out, "  %s: not available (%s)\n", feature_name(feature),
			feature_reason(feature));
}

int features_print_info(FILE *out)
{
	static const struct {
		const char *name;
		enum bpf_prog_type prog_type;
		enum bpf_func_id id;
	} helpers[] = {
		{ "probe_read_user", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_user },
		{ "probe_read_user_str", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_user_str },
		{ "probe_read_kernel", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel },
		{ "probe_read_kernel_str", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_probe_read_kernel_str },
		{ "ringbuf_output", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_ringbuf_output },
		{ "ktime_get_boot_ns", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_ktime_get_boot_ns },
		{ "get_current_cgroup_id", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_cgroup_id },
		{ "get_current_task_btf", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_current_task_btf },
		{ "send_signal", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_send_signal },
		{ "get_stackid", BPF_PROG_TYPE_TRACEPOINT, BPF_FUNC_get_stackid },
		{ "override_return", BPF_PROG_TYPE_KPROBE, BPF_FUNC_override_return },
	};
	static const enum feature kernel_features[] = {
		FEATURE_BPF_SYSCALL, FEATURE_RINGBUF, FEATURE_BTF, FEATURE_TRACEFS,
		FEATURE_PERF_LINK, FEATURE_HASH_ON_DEMAND,
	};
	static const enum feature probe_types[] = {
		FEATURE_TRACEPOINT, FEATURE_RAW_TRACEPOINT, FEATURE_PERF_SOFTWARE,
		FEATURE_CPU_CLOCK, FEATURE_KPROBE, FEATURE_KPROBE_MULTI, FEATURE_UPROBE,
		FEATURE_UPROBE_MULTI, FEATURE_FENTRY, FEATURE_HARDWARE, FEATURE_TEST_RUN,
	};
	struct utsname uts;
	int *cpus = NULL;
	int cpu_count;

	fprintf(out, "System\n");
	if (uname(&uts) == 0) {
		fprintf(out, "  kernel: %s %s %s\n", uts.sysname, uts.release, uts.version);
		fprintf(out, "  arch: %s\n", uts.machine);
	}
	cpu_count = online_cpus(&cpus);
	if (cpu_count > 0)
		fprintf(out, "  online cpus: %d\n", cpu_count);
	free(cpus);
	if (tracefs_root())
		fprintf(out, "  tracefs: %s\n", tracefs_root());

	fprintf(out, "\nKernel features\n");
	for (size_t i = 0; i < sizeof(kernel_features) / sizeof(kernel_features[0]); i++)
		print_feature(out, kernel_features[i]);

	fprintf(out, "\nKernel helpers\n");
	if (feature_available(FEATURE_BPF_SYSCALL)) {
		for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
			fprintf(out, "  %s: %s\n", helpers[i].name,
				feature_has_helper(helpers[i].prog_type, helpers[i].id)
					? "available" : "not available");
	} else {
		fprintf(out, "  not probed (%s)\n", feature_reason(FEATURE_BPF_SYSCALL));
	}

	fprintf(out, "\nProbe types\n");
	for (size_t i = 0; i < sizeof(probe_types) / sizeof(probe_types[0]); i++)
		print_feature(out, probe_types[i]);
	return 0;
}
