/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BTF function information for programs with callbacks.
 *
 * The kernel only accepts BPF-to-BPF callbacks (bpf_for_each_map_elem) when
 * the program comes with BTF describing each function, so for such programs
 * the loader builds a tiny BTF blob: one prototype for the probe's main
 * function and one for the callbacks.
 */
#ifndef SONDE_FUNC_INFO_H
#define SONDE_FUNC_INFO_H

#include <linux/bpf.h>

#include "../common/program.h"

struct func_info {
	int btf_fd;                    /* -1 when the program needs none */
	struct bpf_func_info *records; /* one per function */
	int count;
};

/* 0, or negative errno. Nothing to do (btf_fd -1) for single-function programs. */
int func_info_build(const struct probe_program *probe, struct func_info *info);
void func_info_free(struct func_info *info);

#endif
