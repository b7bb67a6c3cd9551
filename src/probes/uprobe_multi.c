/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Many uprobes through one uprobe_multi link (kernel 6.6).
 *
 * A wildcard like uprobe:/usr/bin/app:* matches hundreds or thousands of
 * functions. As perf events, each needs its own uprobe registration and
 * its own release, and releasing a uprobe waits for the tasks-trace RCU
 * grace period: a thousand take many seconds. A BPF_TRACE_UPROBE_MULTI
 * link places every site at once and is released in one go.
 *
 * One link runs one program, but sonde has one compiled program per point
 * (each knows its `probe`, `func` and retval constants), so the link runs
 * a dispatcher (dispatch.c) and each site carries as its cookie the slot of
 * its point's program: bpf_get_attach_cookie() picks the program, which
 * then runs with the uprobe's own pt_regs as if attached alone. The
 * points' programs are loaded for BPF_TRACE_UPROBE_MULTI too (a program
 * array takes only programs made for the same kind of attachment).
 *
 * The points of one wildcard share a struct uprobe_group, made when they
 * are expanded; attaching the first creates the array, the dispatcher and
 * the link for all, and every point then fills its slot.
 */
#include "provider.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "../kernel/attach.h"
#include "../kernel/features.h"

/* A wildcard matching this many functions or more is attached through one
 * link; every such point then costs one program and one array slot. */
#define UPROBE_MULTI_MIN_POINTS 2

struct uprobe_group {
	struct probe_group base;
	char *path;
	bool retprobe;
	int count;
	uint64_t *offsets;   /* file offset of each site */
	uint64_t *cookies;   /* slot of each site's program: its index */
	int map_fd;          /* the program array; -1 until the first point attaches */
	int failed;          /* -errno once creating the link failed, else 0 */
	char *failure;       /* and why */
};

static void uprobe_group_free(struct probe_group *base)
{
	struct uprobe_group *group = (struct uprobe_group *)base;

	free(group->path);
	free(group->offsets);
	free(group->cookies);
	free(group->failure);
	free(group);
}

void uprobe_multi_gather(probe_point_list *points, int first, bool retprobe)
{
	struct uprobe_group *group;
	int count = points->count - first;

	if (count < UPROBE_MULTI_MIN_POINTS || !feature_available(FEATURE_UPROBE_MULTI))
		return;
	group = xcalloc(1, sizeof(*group));
	group->base.free = uprobe_group_free;
	group->path = xstrdup(points->items[first]->binary_path);
	group->retprobe = retprobe;
	group->count = count;
	group->offsets = xcalloc((size_t)count, sizeof(*group->offsets));
	group->cookies = xcalloc((size_t)count, sizeof(*group->cookies));
	group->map_fd = -1;
	group->base.index.kind = ARG_LOCATION_ATTACH_COOKIE;
	group->base.index_limit = count;
	for (int i = 0; i < count; i++) {
		struct probe_point *point = points->items[first + i];

		group->offsets[i] = point->binary_offset;
		group->cookies[i] = (uint64_t)i;
		point->group = &group->base;
		point->group_slot = i;
		group->base.refs++;
	}
}

/* The dispatcher's prelude: the slot is the site's cookie. */
#define UPROBE_PRELUDE_INSNS 3

static int uprobe_group_attach(struct uprobe_group *group, pid_t pid, fd_list *fds)
{
	const struct bpf_insn prelude[UPROBE_PRELUDE_INSNS] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_6, .src_reg = BPF_REG_1 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_attach_cookie },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_0 },
	};
	int map_fd, prog_fd, link_fd;

	map_fd = probe_dispatch_array_create("sonde_uprobes", (uint32_t)group->count);
	if (map_fd < 0) {
		group->failure = xasprintf("cannot create the uprobe program array: %s",
					   strerror(-map_fd));
		return map_fd;
	}
	prog_fd = probe_dispatcher_load(BPF_PROG_TYPE_KPROBE, ATTACH_TRACE_UPROBE_MULTI,
					"sonde_uprobes", prelude, UPROBE_PRELUDE_INSNS, map_fd);
	if (prog_fd < 0) {
		close(map_fd);
		group->failure = xasprintf("cannot load the uprobe dispatcher: %s", strerror(-prog_fd));
		return prog_fd;
	}
	link_fd = uprobe_multi_link_create(prog_fd, group->path, group->offsets, group->cookies,
					   (uint32_t)group->count, group->retprobe, pid);
	if (link_fd < 0) {
		close(prog_fd);
		close(map_fd);
		group->failure = xasprintf("cannot attach %d %s in %s with one uprobe_multi link: %s",
					   group->count, group->retprobe ? "uretprobes" : "uprobes",
					   group->path, strerror(-link_fd));
		return link_fd;
	}
	vec_push(fds, map_fd);
	vec_push(fds, prog_fd);
	vec_push(fds, link_fd);
	group->map_fd = map_fd;
	return 0;
}

int uprobe_multi_attach(const struct probe_point *point, int prog_fd, fd_list *fds, char **error)
{
	struct uprobe_group *group = (struct uprobe_group *)point->group;
	uint32_t key = (uint32_t)point->group_slot;

	if (group->map_fd < 0 && !group->failed)
		group->failed = uprobe_group_attach(group, point->pid, fds);
	if (group->failed) {
		*error = xstrdup(group->failure);
		return group->failed;
	}
	if (bpf_map_update_elem(group->map_fd, &key, &prog_fd, BPF_ANY) != 0) {
		int err = errno;

		*error = xasprintf("cannot attach %s through its uprobe_multi link: %s", point->name,
				   strerror(err));
		return -err;
	}
	return 0;
}

int uprobe_multi_prepare_load(const struct probe_point *point, uint32_t *expected_attach_type,
			      uint32_t *attach_btf_id, int *attach_btf_obj_fd, char **error)
{
	if (point->group)
		*expected_attach_type = ATTACH_TRACE_UPROBE_MULTI;
	return 0;
}
