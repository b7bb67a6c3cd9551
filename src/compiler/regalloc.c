/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Register allocation: linear scan over live intervals.
 *
 * First the IR is tidied where code generation, one statement at a time,
 * cannot see across statements: jumps threaded, a slot stored and read
 * straight back turned into a copy, and copies whose source dies there
 * coalesced away.
 *
 * Virtual registers hold expression temporaries, so most live for a few
 * instructions. Each gets one of the callee-saved registers r6-r9 (they
 * survive helper calls, which clobber r0-r5) or, when all four are busy, an
 * 8-byte stack slot. The verifier tracks 8-byte spills precisely, pointers
 * included, so spilled values lose nothing but speed.
 *
 * Intervals are [first mention, last mention] in program order, widened over
 * loops: a register live when a backward jump's target is reached must stay
 * live until the jump. Spilled registers are rewritten with r4 (for dst) and
 * r5 (for src) as scratch; that is safe because r1-r5 only carry values
 * between the argument moves and the helper call, and those moves (physical
 * destination) reload a spilled source straight into their destination.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define SCRATCH_DST 4
#define SCRATCH_SRC 5

struct interval {
	int start;
	int end;
	int reg;     /* physical register, or -1 when spilled */
	int slot;    /* stack offset when spilled */
};

static bool insn_reads_dst(const struct ir_insn *insn)
{
	if (insn->kind == IR_LABEL || insn->kind == IR_LD_MAP || insn->kind == IR_LD_IMM64 ||
	    insn->kind == IR_LD_FUNC)
		return false;
	int class = BPF_CLASS(insn->code);
	if (class == BPF_LDX)
		return false;
	if ((class == BPF_ALU64 || class == BPF_ALU) && BPF_OP(insn->code) == BPF_MOV)
		return false;
	if (class == BPF_JMP && (BPF_OP(insn->code) == BPF_CALL || BPF_OP(insn->code) == BPF_EXIT ||
				 BPF_OP(insn->code) == BPF_JA))
		return false;
	return true;
}

static bool insn_writes_dst(const struct ir_insn *insn)
{
	if (insn->kind == IR_LD_MAP || insn->kind == IR_LD_IMM64 || insn->kind == IR_LD_FUNC)
		return true;
	if (insn->kind != IR_INSN)
		return false;
	int class = BPF_CLASS(insn->code);
	return class == BPF_LDX || class == BPF_ALU64 || class == BPF_ALU;
}

static bool insn_uses_src_reg(const struct ir_insn *insn)
{
	if (insn->kind == IR_LD_MAP || insn->kind == IR_LD_IMM64 || insn->kind == IR_LABEL ||
	    insn->kind == IR_LD_FUNC)
		return false;
	int class = BPF_CLASS(insn->code);
	if (class == BPF_LDX || class == BPF_STX)
		return true;
	if (class == BPF_ST)
		return false;
	if (class == BPF_JMP && (BPF_OP(insn->code) == BPF_CALL || BPF_OP(insn->code) == BPF_EXIT ||
				 BPF_OP(insn->code) == BPF_JA))
		return false;
	return BPF_SRC(insn->code) == BPF_X;
}

static bool insn_uses_dst_reg(const struct ir_insn *insn)
{
	return insn_reads_dst(insn) || insn_writes_dst(insn);
}

static void mention(struct interval *intervals, int reg, int index)
{
	if (reg < IR_FIRST_VREG)
		return;
	struct interval *iv = &intervals[reg - IR_FIRST_VREG];
	if (iv->start < 0)
		iv->start = index;
	iv->end = index;
}

static void compute_intervals(const struct ir_function *fn, struct interval *intervals)
{
	for (int i = 0; i < fn->insns.count; i++) {
		const struct ir_insn *insn = &fn->insns.items[i];
		if (insn_uses_dst_reg(insn))
			mention(intervals, insn->dst, i);
		if (insn_uses_src_reg(insn))
			mention(intervals, insn->src, i);
	}
	int *label_at = xcalloc(fn->label_count + 1, sizeof(int));
	for (int i = 0; i < fn->insns.count; i++)
		if (fn->insns.items[i].kind == IR_LABEL)
			label_at[fn->insns.items[i].label] = i;
	bool changed = true;
	while (changed) {
		changed = false;
		for (int j = 0; j < fn->insns.count; j++) {
			const struct ir_insn *insn = &fn->insns.items[j];
			if (insn->kind != IR_JUMP || label_at[insn->label] >= j)
				continue;
			int target = label_at[insn->label];
			for (int v = 0; v < fn->vreg_count; v++) {
				struct interval *iv = &intervals[v];
				if (iv->start >= 0 && iv->start < target && iv->end >= target && iv->end < j) {
					iv->end = j;
					changed = true;
				}
			}
		}
	}
	free(label_at);
}

/* A virtual register and where its interval starts, for sorting. */
struct interval_start {
	int start;
	int vreg;
};

/* By start, then by vreg number: the order an insertion sort kept. */
static int compare_starts(const void *a, const void *b)
{
	const struct interval_start *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->vreg < y->vreg ? -1 : x->vreg > y->vreg;
}

static void allocate(struct ir_function *fn, struct interval *intervals)
{
	int count = fn->vreg_count;
	int *order = xcalloc(count + 1, sizeof(int));
	/* sorted by start with qsort: an insertion sort was quadratic on the
	 * 100,000 registers of a big unroll (the fuzzer's 10 s timeout) */
	struct interval_start *starts = xcalloc(count + 1, sizeof(*starts));
	for (int i = 0; i < count; i++)
		starts[i] = (struct interval_start){ intervals[i].start, i };
	qsort(starts, (size_t)count, sizeof(*starts), compare_starts);
	for (int i = 0; i < count; i++)
		order[i] = starts[i].vreg;
	free(starts);
	int holder[4] = { -1, -1, -1, -1 }; /* vreg in r6..r9 */
	for (int k = 0; k < count; k++) {
		int v = order[k];
		struct interval *iv = &intervals[v];
		iv->reg = -1;
		if (iv->start < 0)
			continue;
		int free_index = -1, furthest = -1;
		for (int r = 0; r < 4; r++) {
			if (holder[r] >= 0 && intervals[holder[r]].end < iv->start)
				holder[r] = -1;
			if (holder[r] < 0 && free_index < 0)
				free_index = r;
			if (holder[r] >= 0 && (furthest < 0 || intervals[holder[r]].end > intervals[holder[furthest]].end))
				furthest = r;
		}
		if (free_index >= 0) {
			holder[free_index] = v;
			iv->reg = 6 + free_index;
			continue;
		}
		/* spill whichever interval reaches furthest */
		if (intervals[holder[furthest]].end > iv->end) {
			struct interval *victim = &intervals[holder[furthest]];
			iv->reg = victim->reg;
			victim->reg = -1;
			victim->slot = ir_stack_alloc(fn, 8);
			holder[furthest] = v;
		} else {
			iv->slot = ir_stack_alloc(fn, 8);
		}
	}
	free(order);
}

static void push(struct ir_function *out, struct ir_insn insn)
{
	vec_push(&out->insns, insn);
}

static struct ir_insn spill_access(int code_class, int reg, int slot, struct src_loc loc)
{
	struct ir_insn insn = { .kind = IR_INSN, .off = (int16_t)slot, .loc = loc };
	if (code_class == BPF_LDX) {
		insn.code = BPF_LDX | BPF_MEM | BPF_DW;
		insn.dst = reg;
		insn.src = BPF_REG_10;
	} else {
		insn.code = BPF_STX | BPF_MEM | BPF_DW;
		insn.dst = BPF_REG_10;
		insn.src = reg;
	}
	return insn;
}

static void rewrite(struct ir_function *fn, const struct interval *intervals)
{
	struct ir_function out = { 0 };
	for (int i = 0; i < fn->insns.count; i++) {
		struct ir_insn insn = fn->insns.items[i];
		const struct interval *dst_iv = insn.dst >= IR_FIRST_VREG && insn_uses_dst_reg(&insn)
							? &intervals[insn.dst - IR_FIRST_VREG] : NULL;
		const struct interval *src_iv = insn.src >= IR_FIRST_VREG && insn_uses_src_reg(&insn)
							? &intervals[insn.src - IR_FIRST_VREG] : NULL;
		bool is_mov_x = insn.kind == IR_INSN && BPF_CLASS(insn.code) == BPF_ALU64 &&
				BPF_OP(insn.code) == BPF_MOV && BPF_SRC(insn.code) == BPF_X;
		/* moves between a physical and a spilled register become one memory access */
		if (is_mov_x && src_iv && src_iv->reg < 0 && !dst_iv) {
			push(&out, spill_access(BPF_LDX, insn.dst, src_iv->slot, insn.loc));
			continue;
		}
		if (is_mov_x && dst_iv && dst_iv->reg < 0 && (!src_iv || src_iv->reg >= 0)) {
			int src = src_iv ? src_iv->reg : insn.src;
			push(&out, spill_access(BPF_STX, src, dst_iv->slot, insn.loc));
			continue;
		}
		if (src_iv) {
			if (src_iv->reg >= 0) {
				insn.src = src_iv->reg;
			} else {
				push(&out, spill_access(BPF_LDX, SCRATCH_SRC, src_iv->slot, insn.loc));
				insn.src = SCRATCH_SRC;
			}
		}
		if (dst_iv) {
			if (dst_iv->reg >= 0) {
				insn.dst = dst_iv->reg;
				push(&out, insn);
			} else {
				if (insn_reads_dst(&insn))
					push(&out, spill_access(BPF_LDX, SCRATCH_DST, dst_iv->slot, insn.loc));
				int slot = dst_iv->slot;
				insn.dst = SCRATCH_DST;
				push(&out, insn);
				if (insn_writes_dst(&insn))
					push(&out, spill_access(BPF_STX, SCRATCH_DST, slot, insn.loc));
			}
		} else {
			push(&out, insn);
		}
	}
	free(fn->insns.items);
	fn->insns = out.insns;
}

/* Drops instructions whose only effect is to set a virtual register that
 * nothing reads (a context copy in a program that never uses the context,
 * a helper's unused result), repeating until none is left. */
static void remove_dead_definitions(struct ir_function *fn)
{
	int *uses = xcalloc(fn->vreg_count + 1, sizeof(int));
	bool changed = true;
	while (changed) {
		changed = false;
		memset(uses, 0, sizeof(int) * (fn->vreg_count + 1));
		for (int i = 0; i < fn->insns.count; i++) {
			const struct ir_insn *insn = &fn->insns.items[i];
			if (insn_uses_src_reg(insn) && insn->src >= IR_FIRST_VREG)
				uses[insn->src - IR_FIRST_VREG]++;
			if (insn_reads_dst(insn) && insn->dst >= IR_FIRST_VREG)
				uses[insn->dst - IR_FIRST_VREG]++;
			/* stores and jumps read their dst register as an operand */
			if (insn->kind == IR_INSN && (BPF_CLASS(insn->code) == BPF_STX ||
						      BPF_CLASS(insn->code) == BPF_ST) &&
			    insn->dst >= IR_FIRST_VREG)
				uses[insn->dst - IR_FIRST_VREG]++;
		}
		int kept = 0;
		for (int i = 0; i < fn->insns.count; i++) {
			const struct ir_insn *insn = &fn->insns.items[i];
			/* loads have no side effect either: an unused one can go too */
			bool defines_only = insn_writes_dst(insn) && insn->dst >= IR_FIRST_VREG;
			if (defines_only && uses[insn->dst - IR_FIRST_VREG] == 0) {
				changed = true;
				continue;
			}
			fn->insns.items[kept++] = *insn;
		}
		fn->insns.count = kept;
	}
	free(uses);
}

static bool is_vreg_move(const struct ir_insn *insn)
{
	return insn->kind == IR_INSN && insn->code == (BPF_ALU64 | BPF_MOV | BPF_X) &&
	       insn->dst >= IR_FIRST_VREG && insn->src >= IR_FIRST_VREG && insn->dst != insn->src;
}

/* A variable stored and read straight back (`*(r10 -8) = v1; v2 = *(r10 -8)`,
 * one statement's result used by the next) is copied, not reloaded. */
static void forward_stores(struct ir_function *fn)
{
	for (int i = 0; i + 1 < fn->insns.count; i++) {
		const struct ir_insn *store = &fn->insns.items[i];
		struct ir_insn *load = &fn->insns.items[i + 1];
		if (store->kind != IR_INSN || load->kind != IR_INSN || store->dst != BPF_REG_10 ||
		    load->code != (BPF_LDX | BPF_MEM | BPF_DW) || load->src != BPF_REG_10 ||
		    load->off != store->off)
			continue;
		if (store->code == (BPF_STX | BPF_MEM | BPF_DW) && store->src >= IR_FIRST_VREG)
			*load = (struct ir_insn){ .kind = IR_INSN, .code = BPF_ALU64 | BPF_MOV | BPF_X,
						  .dst = load->dst, .src = store->src, .loc = load->loc };
		else if (store->code == (BPF_ST | BPF_MEM | BPF_DW))
			*load = (struct ir_insn){ .kind = IR_INSN, .code = BPF_ALU64 | BPF_MOV | BPF_K,
						  .dst = load->dst, .imm = store->imm, .loc = load->loc };
	}
}

static bool has_backward_jump(const struct ir_function *fn)
{
	int *label_at = xcalloc(fn->label_count + 1, sizeof(int));
	for (int i = 0; i < fn->insns.count; i++)
		if (fn->insns.items[i].kind == IR_LABEL)
			label_at[fn->insns.items[i].label] = i;
	bool found = false;
	for (int i = 0; i < fn->insns.count && !found; i++)
		found = fn->insns.items[i].kind == IR_JUMP && label_at[fn->insns.items[i].label] < i;
	free(label_at);
	return found;
}

static int alias_root(int *alias, int reg)
{
	while (alias[reg - IR_FIRST_VREG] != reg)
		reg = alias[reg - IR_FIRST_VREG];
	return reg;
}

/* `v2 = v1` where v1 is never mentioned again and v2 never before: v2 is
 * renamed v1 and the move goes. In a function without loops, program
 * order is the only order, so v1 is dead past the move on every path. */
static void coalesce_moves(struct ir_function *fn)
{
	if (has_backward_jump(fn))
		return;
	int count = fn->vreg_count;
	int *first = xcalloc(count + 1, sizeof(int)), *last = xcalloc(count + 1, sizeof(int));
	int *alias = xcalloc(count + 1, sizeof(int));
	for (int v = 0; v < count; v++) {
		first[v] = last[v] = -1;
		alias[v] = v + IR_FIRST_VREG;
	}
	for (int i = 0; i < fn->insns.count; i++) {
		const struct ir_insn *insn = &fn->insns.items[i];
		int regs[2] = { insn_uses_dst_reg(insn) ? insn->dst : -1,
				insn_uses_src_reg(insn) ? insn->src : -1 };
		for (int k = 0; k < 2; k++) {
			if (regs[k] < IR_FIRST_VREG)
				continue;
			if (first[regs[k] - IR_FIRST_VREG] < 0)
				first[regs[k] - IR_FIRST_VREG] = i;
			last[regs[k] - IR_FIRST_VREG] = i;
		}
	}
	int kept = 0;
	for (int i = 0; i < fn->insns.count; i++) {
		struct ir_insn insn = fn->insns.items[i];
		if (is_vreg_move(&insn)) {
			int copy = insn.dst, source = alias_root(alias, insn.src);
			if (first[copy - IR_FIRST_VREG] == i && last[source - IR_FIRST_VREG] == i) {
				alias[copy - IR_FIRST_VREG] = source;
				last[source - IR_FIRST_VREG] = last[copy - IR_FIRST_VREG];
				continue;
			}
		}
		if (insn_uses_dst_reg(&insn) && insn.dst >= IR_FIRST_VREG)
			insn.dst = alias_root(alias, insn.dst);
		if (insn_uses_src_reg(&insn) && insn.src >= IR_FIRST_VREG)
			insn.src = alias_root(alias, insn.src);
		fn->insns.items[kept++] = insn;
	}
	fn->insns.count = kept;
	free(first);
	free(last);
	free(alias);
}

int regalloc_run(struct ir_function *fn, char **error)
{
	ir_simplify_jumps(fn);
	ir_drop_repeated_extensions(fn);
	forward_stores(fn);
	remove_dead_definitions(fn);
	coalesce_moves(fn);
	int count = fn->vreg_count;
	struct interval *intervals = xcalloc(count + 1, sizeof(*intervals));
	for (int v = 0; v < count; v++) {
		intervals[v].start = -1;
		intervals[v].end = -1;
	}
	compute_intervals(fn, intervals);
	allocate(fn, intervals);
	rewrite(fn, intervals);
	free(intervals);
	if (fn->stack_size > 512) {
		*error = xasprintf("the program needs %d bytes of BPF stack, more than the kernel's 512; "
				   "use shorter strings (SONDE_MAX_STRLEN) or fewer values per printf",
				   fn->stack_size);
		return -1;
	}
	return 0;
}
