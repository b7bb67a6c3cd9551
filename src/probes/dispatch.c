/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Dispatchers: one small program attached once that hands each event to
 * one of many compiled programs, with a tail call into a program array.
 *
 * sonde compiles one program per probe point (so the argument layout is
 * constant in it; `probe` and `func` too, unless the point's group lets
 * the program find them at run time, see probe_group). Attaching hundreds of them one by
 * one costs one kernel attachment each, and detaching such attachments
 * is what takes seconds. Where one attachment can cover many sites (the
 * raw_syscalls tracepoints for every syscall, one uprobe_multi link for
 * many functions), a dispatcher is attached there instead and picks the
 * point's program by an index it finds in the event: the syscall number,
 * the uprobe_multi cookie. A tail call keeps the context, so the point's
 * program runs exactly as if attached itself; an empty slot falls
 * through and the event costs nothing more.
 *
 * The callers write the part that finds the index (the "prelude"); this
 * file appends the tail call and loads the whole.
 */
#include "provider.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include <string.h>

int probe_dispatch_array_create(const char *name, uint32_t slots)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_PROG_ARRAY, name, 4, 4, slots, NULL);

	return fd < 0 ? -errno : fd;
}

int probe_dispatcher_load(uint32_t prog_type, uint32_t expected_attach_type, const char *name,
			  const struct bpf_insn *prelude, int prelude_count, int map_fd)
{
	const struct bpf_insn tail[PROBE_DISPATCH_TAIL_INSNS] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1, .src_reg = BPF_REG_6 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_2,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_tail_call },
		/* PROBE_DISPATCH_RETURN: where the prelude jumps to give up */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = expected_attach_type);
	int count = prelude_count + PROBE_DISPATCH_TAIL_INSNS;
	struct bpf_insn *insns = xcalloc((size_t)count, sizeof(*insns));
	int fd;

	memcpy(insns, prelude, sizeof(*insns) * (size_t)prelude_count);
	memcpy(insns + prelude_count, tail, sizeof(tail));
	fd = bpf_prog_load(prog_type, name, "GPL", insns, (size_t)count, &opts);
	free(insns);
	return fd < 0 ? -errno : fd;
}
