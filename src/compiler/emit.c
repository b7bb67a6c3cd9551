/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Emission: the last step from IR to what the kernel loads. Labels become
 * relative jump offsets, 64-bit loads and map references become the
 * two-instruction BPF_LD_IMM64 form (map references keep the map id in imm,
 * tagged BPF_PSEUDO_MAP_FD, for the loader to replace with the real fd), and
 * each instruction keeps the source position it came from.
 */
#include <stdlib.h>

#include "ir.h"

static int insn_width(const struct ir_insn *insn)
{
	if (insn->kind == IR_LABEL)
		return 0;
	if (insn->kind == IR_LD_MAP || insn->kind == IR_LD_IMM64 || insn->kind == IR_LD_FUNC)
		return 2;
	return 1;
}

static int function_width(const struct ir_function *fn)
{
	int total = 0;
	for (int i = 0; i < fn->insns.count; i++)
		total += insn_width(&fn->insns.items[i]);
	return total;
}

/* Emits one function at `base` in the output; labels are local to it. */
static int emit_function(const struct ir_function *fn, int base, const int *function_start,
			 struct bpf_insn *insns, struct src_loc *locs, char **error)
{
	int *label_position = xcalloc(fn->label_count + 1, sizeof(int));
	int at = base;
	for (int i = 0; i < fn->insns.count; i++) {
		if (fn->insns.items[i].kind == IR_LABEL)
			label_position[fn->insns.items[i].label] = at;
		at += insn_width(&fn->insns.items[i]);
	}
	at = base;
	int result = 0;
	for (int i = 0; i < fn->insns.count && result == 0; i++) {
		const struct ir_insn *insn = &fn->insns.items[i];
		if (insn->kind == IR_LABEL)
			continue;
		if (insn->dst >= IR_FIRST_VREG || insn->src >= IR_FIRST_VREG) {
			*error = xasprintf("internal error: virtual register left after allocation");
			result = -1;
			break;
		}
		struct bpf_insn *raw = &insns[at];
		raw->code = insn->code;
		raw->dst_reg = insn->dst;
		raw->src_reg = insn->src;
		raw->off = insn->off;
		raw->imm = (int32_t)insn->imm;
		locs[at] = insn->loc;
		if (insn->kind == IR_LD_MAP) {
			/* a map value's offset goes in the second half, not in off */
			raw->src_reg = insn->src == BPF_PSEUDO_MAP_VALUE ? BPF_PSEUDO_MAP_VALUE
									 : BPF_PSEUDO_MAP_FD;
			raw->off = 0;
		}
		if (insn->kind == IR_LD_FUNC) {
			/* the kernel wants the callee's offset relative to the next instruction */
			raw->src_reg = BPF_PSEUDO_FUNC;
			raw->imm = function_start[insn->imm + 1] - (at + 1);
		}
		if (insn_width(insn) == 2) {
			insns[at + 1].imm = insn->kind == IR_LD_IMM64 ? (int32_t)((uint64_t)insn->imm >> 32) : 0;
			if (insn->kind == IR_LD_MAP && insn->src == BPF_PSEUDO_MAP_VALUE)
				insns[at + 1].imm = insn->off;
			locs[at + 1] = insn->loc;
		}
		if (insn->kind == IR_JUMP) {
			long offset = (long)label_position[insn->label] - (at + 1);
			if (offset < INT16_MIN || offset > INT16_MAX) {
				*error = xasprintf("the program is too large: a jump spans %ld instructions", offset);
				result = -1;
			}
			raw->off = (int16_t)offset;
		}
		at += insn_width(insn);
	}
	free(label_position);
	return result;
}

int emit_program(const struct ir_function *functions, int function_count, struct bpf_insn **insns_out,
		 struct src_loc **locs_out, int *count_out, int **function_starts, char **error)
{
	int *function_start = xcalloc(function_count + 1, sizeof(int));
	int total = 0;
	for (int f = 0; f < function_count; f++) {
		function_start[f] = total;
		total += function_width(&functions[f]);
	}
	struct bpf_insn *insns = xcalloc(total + 1, sizeof(*insns));
	struct src_loc *locs = xcalloc(total + 1, sizeof(*locs));
	int result = 0;
	for (int f = 0; f < function_count && result == 0; f++)
		result = emit_function(&functions[f], function_start[f], function_start, insns, locs, error);
	if (result < 0)
		free(function_start);
	else
		*function_starts = function_start;
	if (result < 0) {
		free(insns);
		free(locs);
		return -1;
	}
	*insns_out = insns;
	*locs_out = locs;
	*count_out = total;
	return 0;
}
