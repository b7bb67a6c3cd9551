/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What this kernel can do, found by trying it: loading tiny programs,
 * creating maps, opening perf events. Version numbers lie (distributions
 * backport, configs differ), attempts do not. Each answer is worked out once
 * and cached. The probes attach through kernel/attach.c, as the providers
 * do.
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

#endif
