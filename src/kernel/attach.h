/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Attaching a loaded program to the kernel: perf events (tracepoints,
 * timers, software and hardware counters, kprobes and uprobes through
 * their PMUs) with a bpf_link where the kernel has one, and uprobe_multi
 * links. Kernel-facing: returns -errno, never prints.
 */
#ifndef SONDE_ATTACH_H
#define SONDE_ATTACH_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* perf_event_open(2), which glibc does not wrap. Returns an fd or -errno. */
int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags);
/* BPF_TRACE_UPROBE_MULTI, from kernel 6.6 on (the enum value, for headers
 * that predate it). */
#define ATTACH_TRACE_UPROBE_MULTI 48
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
