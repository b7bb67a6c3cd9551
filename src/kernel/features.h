/*
 * What this kernel can do, found by trying it: loading tiny programs,
 * creating maps, opening perf events. Version numbers lie (distributions
 * backport, configs differ), attempts do not. Each answer is worked out once
 * and cached.
 *
 * The perf event helpers at the bottom are shared by the providers that
 * attach through perf events (tracepoint, interval, profile, software,
 * hardware); the probes here use them too.
 */
#ifndef SONDE_FEATURES_H
#define SONDE_FEATURES_H

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum feature {
	FEATURE_BPF_SYSCALL,     /* bpf(2) usable with tracing privileges */
	FEATURE_RINGBUF,         /* BPF_MAP_TYPE_RINGBUF */
	FEATURE_BTF,             /* /sys/kernel/btf/vmlinux */
	FEATURE_TRACEFS,         /* tracefs mounted */
	FEATURE_TRACEPOINT,      /* BPF program on a tracepoint perf event */
	FEATURE_RAW_TRACEPOINT,  /* BPF_RAW_TRACEPOINT_OPEN */
	FEATURE_PERF_SOFTWARE,   /* system-wide software perf events */
	FEATURE_CPU_CLOCK,       /* BPF program on cpu-clock sampling events */
	FEATURE_PERF_LINK,       /* bpf_link_create(BPF_PERF_EVENT) */
	FEATURE_KPROBE,          /* kprobe perf events */
	FEATURE_KPROBE_MULTI,    /* BPF_TRACE_KPROBE_MULTI links */
	FEATURE_UPROBE,          /* uprobe perf events */
	FEATURE_UPROBE_MULTI,    /* BPF_TRACE_UPROBE_MULTI links (6.6) */
	FEATURE_FENTRY,          /* BPF_PROG_TYPE_TRACING fentry programs */
	FEATURE_HARDWARE,        /* hardware PMC perf events */
	FEATURE_TEST_RUN,        /* BPF_PROG_TEST_RUN of raw tracepoint programs (BEGIN/END) */
	FEATURE_HASH_ON_DEMAND,  /* hash maps without preallocation in every program type (6.1) */
	FEATURE_COUNT,
};

/* Whether the feature works here (probed on first use). */
bool feature_available(enum feature feature);
/* Why it does not ("" when it does). */
const char *feature_reason(enum feature feature);
/* Short name for reports: "ringbuf", "kprobe". */
const char *feature_name(enum feature feature);

/* What sonde says, wherever it finds out, when it lacks the privileges. */
#define FEATURES_ROOT_MESSAGE "sonde must run as root (or with CAP_BPF and CAP_PERFMON)"

/* 0 when BPF programs can be loaded; otherwise -errno and a sentence the
 * user can act on (FEATURES_ROOT_MESSAGE for -EPERM and -EACCES). */
int features_check_bpf(char **error);

static inline bool feature_has_ringbuf(void) { return feature_available(FEATURE_RINGBUF); }
static inline bool feature_has_btf(void) { return feature_available(FEATURE_BTF); }
static inline bool feature_has_perf_link(void) { return feature_available(FEATURE_PERF_LINK); }
static inline bool feature_has_kprobe(void) { return feature_available(FEATURE_KPROBE); }
static inline bool feature_has_fentry(void) { return feature_available(FEATURE_FENTRY); }
static inline bool feature_has_hash_on_demand(void)
{
	return feature_available(FEATURE_HASH_ON_DEMAND);
}

/* Whether the verifier knows helper `helper` for programs of `prog_type`. */
bool feature_has_helper(enum bpf_prog_type prog_type, enum bpf_func_id helper);

/* The --info report: kernel release, then each feature and probe type as
 * "available" or "not available (reason)". Returns 0. */
int features_print_info(FILE *out);

/* ---- perf events ---- */

/* perf_event_open(2), which glibc does not wrap. Returns an fd or -errno. */
int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags);
/* BPF_TRACE_UPROBE_MULTI, from kernel 6.6 on (the enum value, for headers
 * that predate it). */
#define FEATURE_TRACE_UPROBE_MULTI 48
/* Attaches prog_fd (a kprobe program loaded for BPF_TRACE_UPROBE_MULTI) at
 * count file offsets of path, each with its cookie, on return when
 * retprobe, for process pid only when it is not 0: one link for all.
 * libbpf 1.1 has no wrapper. Returns the link fd or -errno. */
int uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, uint32_t count, bool retprobe, pid_t pid);
/* The online CPUs, from /sys/devices/system/cpu/online. Returns how many
 * (and a malloc'd array in *cpus) or -errno. */
int online_cpus(int **cpus);
/*
 * Opens a perf event for attr on cpu (pid -1: every task) and runs prog_fd
 * on it. On success returns 0 with fds[0] the perf event and fds[1] the
 * bpf_link, or -1 when the kernel predates perf links and the program was
 * attached by ioctl; closing both detaches the program. On failure returns
 * -errno, closes what it opened and names the step that failed in *step.
 * A non-zero cookie is what bpf_get_attach_cookie() returns in the program
 * (it needs a perf link: -EOPNOTSUPP without).
 */
int perf_event_attach(struct perf_event_attr *attr, int cpu, int prog_fd, uint64_t cookie,
		      int fds[2], const char **step);
/* The same for one task (pid > 0, cpu -1) or every task (pid -1, one cpu). */
int perf_event_attach_task(struct perf_event_attr *attr, pid_t pid, int cpu, int prog_fd,
			   uint64_t cookie, int fds[2], const char **step);

#endif
