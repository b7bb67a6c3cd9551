/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Attaching programs to perf events and links: the kernel calls the
 * providers make (tracepoint, interval, profile, software, hardware,
 * kprobe and uprobe through perf events; uprobe_multi links) and the
 * feature probes try. See attach.h.
 */
#include "attach.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../common/util.h"

int perf_event_open_fd(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
		       unsigned long flags)
{
	long fd;

	attr->size = sizeof(*attr);
	fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);
	return fd < 0 ? -errno : (int)fd;
}

int uprobe_multi_link_create(int prog_fd, const char *path, const uint64_t *offsets,
			     const uint64_t *cookies, uint32_t count, bool retprobe, pid_t pid)
{
	/* union bpf_attr's link_create with its uprobe_multi member, as the
	 * kernel lays it out (6.6+ uapi headers) */
	struct {
		uint32_t prog_fd;
		uint32_t target_fd;
		uint32_t attach_type;
		uint32_t flags;
		uint64_t path;
		uint64_t offsets;
		uint64_t ref_ctr_offsets;
		uint64_t cookies;
		uint32_t cnt;
		uint32_t multi_flags; /* BPF_F_UPROBE_MULTI_RETURN = 1 */
		uint32_t pid;
		uint32_t pad;
	} attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = ATTACH_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = count;
	attr.multi_flags = retprobe ? 1 : 0;
	attr.pid = (uint32_t)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

int online_cpus(int **cpus)
{
	VEC(int) list = { 0 };
	char *text = read_file("/sys/devices/system/cpu/online", NULL);
	char *p;

	if (!text)
		return -errno;
	/* "0-3,5,7-8\n" */
	for (p = text; *p && *p != '\n';) {
		char *end;
		long first = strtol(p, &end, 10), last;
		if (end == p)
			break;
		last = first;
		p = end;
		if (*p == '-') {
			last = strtol(p + 1, &end, 10);
			p = end;
		}
		for (long cpu = first; cpu <= last; cpu++)
			vec_push(&list, (int)cpu);
		if (*p == ',')
			p++;
	}
	free(text);
	if (list.count == 0) {
		free(list.items);
		return -EINVAL;
	}
	*cpus = list.items;
	return list.count;
}

/* Set once a kernel has told us it has no BPF_PERF_EVENT links (before
 * 5.15), so later attaches go straight to the ioctl. */
static bool perf_link_unsupported;

int perf_event_attach(struct perf_event_attr *attr, int cpu, int prog_fd, uint64_t cookie,
		      int fds[2], const char **step)
{
	return perf_event_attach_task(attr, -1, cpu, prog_fd, cookie, fds, step);
}

int perf_event_attach_task(struct perf_event_attr *attr, pid_t pid, int cpu, int prog_fd,
			   uint64_t cookie, int fds[2], const char **step)
{
	LIBBPF_OPTS(bpf_link_create_opts, link_opts, .perf_event.bpf_cookie = cookie);
	int perf_fd, link_fd = -1, err;

	fds[0] = fds[1] = -1;
	perf_fd = perf_event_open_fd(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (perf_fd < 0) {
		*step = "perf_event_open";
		return perf_fd;
	}
	if (!perf_link_unsupported) {
		/* A link rather than the ioctl: the attachment then belongs to
		 * the link fd and shows up in bpftool link. */
		link_fd = bpf_link_create(prog_fd, perf_fd, BPF_PERF_EVENT, &link_opts);
		if (link_fd < 0) {
			err = -errno;
			if (err != -EINVAL && err != -EOPNOTSUPP) {
				*step = "bpf_link_create";
				close(perf_fd);
				return err;
			}
			perf_link_unsupported = true;
			link_fd = -1;
		}
	}
	if (link_fd < 0 && cookie) {
		/* the ioctl has no cookie: the program would take itself for another */
		*step = "bpf_link_create (a BPF cookie needs a perf link)";
		close(perf_fd);
		return -EOPNOTSUPP;
	}
	if (link_fd < 0 && ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
		err = -errno;
		*step = "attaching the BPF program";
		close(perf_fd);
		return err;
	}
	/* Already enabled unless the caller set attr->disabled; harmless then. */
	if (ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		err = -errno;
		*step = "enabling the perf event";
		if (link_fd >= 0)
			close(link_fd);
		close(perf_fd);
		return err;
	}
	fds[0] = perf_fd;
	fds[1] = link_fd;
	return 0;
}

