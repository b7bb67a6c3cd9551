/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IR construction helpers and the IR printer. Each helper appends one
 * instruction carrying the current source position (fn->loc), so that every
 * final BPF instruction can be traced back to the line that produced it.
 */
#include "ir.h"

#include <stdlib.h>

int ir_new_vreg(struct ir_function *fn)
{
	return IR_FIRST_VREG + fn->vreg_count++;
}

int ir_new_label(struct ir_function *fn)
{
	return fn->label_count++;
}

void ir_emit(struct ir_function *fn, struct ir_insn insn)
{
	insn.loc = fn->loc;
	vec_push(&fn->insns, insn);
}

void ir_label(struct ir_function *fn, int label)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_LABEL, .label = label });
}

void ir_mov_imm(struct ir_function *fn, int dst, int64_t imm)
{
	if (imm >= INT32_MIN && imm <= INT32_MAX)
		ir_emit(fn, (struct ir_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst = dst, .imm = imm });
	else
		ir_emit(fn, (struct ir_insn){ .kind = IR_LD_IMM64, .code = BPF_LD | BPF_DW | BPF_IMM,
					      .dst = dst, .imm = imm });
}

void ir_mov(struct ir_function *fn, int dst, int src)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst = dst, .src = src });
}

void ir_alu(struct ir_function *fn, int op, int dst, int src)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_ALU64 | op | BPF_X, .dst = dst, .src = src });
}

void ir_alu_imm(struct ir_function *fn, int op, int dst, int32_t imm)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_ALU64 | op | BPF_K, .dst = dst, .imm = imm });
}

static int size_code(int size)
{
	switch (size) {
	case 1: return BPF_B;
	case 2: return BPF_H;
	case 4: return BPF_W;
	default: return BPF_DW;
	}
}

void ir_load(struct ir_function *fn, int size, int dst, int base, int16_t off)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_LDX | BPF_MEM | size_code(size), .dst = dst,
				      .src = base, .off = off });
}

void ir_store(struct ir_function *fn, int size, int base, int16_t off, int src)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_STX | BPF_MEM | size_code(size), .dst = base,
				      .src = src, .off = off });
}

void ir_store_imm(struct ir_function *fn, int size, int base, int16_t off, int32_t imm)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_ST | BPF_MEM | size_code(size), .dst = base,
				      .off = off, .imm = imm });
}

void ir_jump(struct ir_function *fn, int label)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_JUMP, .code = BPF_JMP | BPF_JA, .label = label });
}

void ir_jump_if(struct ir_function *fn, int op, int a, int b, int label)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_JUMP, .code = BPF_JMP | op | BPF_X, .dst = a,
				      .src = b, .label = label });
}

void ir_jump_if_imm(struct ir_function *fn, int op, int a, int32_t imm, int label)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_JUMP, .code = BPF_JMP | op | BPF_K, .dst = a,
				      .imm = imm, .label = label });
}

void ir_call(struct ir_function *fn, int helper)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_JMP | BPF_CALL, .imm = helper });
}

void ir_ld_map(struct ir_function *fn, int dst, int map_id)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_LD_MAP, .code = BPF_LD | BPF_DW | BPF_IMM,
				      .dst = dst, .src = BPF_PSEUDO_MAP_FD, .imm = map_id });
}

void ir_ld_map_value(struct ir_function *fn, int dst, int map_id, int offset)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_LD_MAP, .code = BPF_LD | BPF_DW | BPF_IMM,
				      .dst = dst, .src = BPF_PSEUDO_MAP_VALUE, .imm = map_id,
				      .off = (int16_t)offset });
}

void ir_ld_func(struct ir_function *fn, int dst, int subprogram)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_LD_FUNC, .code = BPF_LD | BPF_DW | BPF_IMM,
				      .dst = dst, .src = BPF_PSEUDO_FUNC, .imm = subprogram });
}

void ir_ld_btf_var(struct ir_function *fn, int dst, int btf_id)
{
	ir_emit(fn, (struct ir_insn){ .kind = IR_LD_IMM64, .code = BPF_LD | BPF_DW | BPF_IMM,
				      .dst = dst, .src = BPF_PSEUDO_BTF_ID, .imm = btf_id });
}

void ir_exit(struct ir_function *fn)
{
	ir_emit(fn, (struct ir_insn){ .code = BPF_JMP | BPF_EXIT });
}

int ir_stack_alloc(struct ir_function *fn, int size)
{
	fn->stack_size += (size + 7) & ~7;
	return -fn->stack_size;
}

void ir_free(struct ir_function *fn)
{
	free(fn->insns.items);
	fn->insns.items = NULL;
	fn->insns.count = fn->insns.capacity = 0;
}

static void print_reg(FILE *out, int reg)
{
	if (reg >= IR_FIRST_VREG)
		fprintf(out, "v%d", reg);
	else
		fprintf(out, "r%d", reg);
}

static const char *alu_symbol(int op)
{
	switch (op) {
	case BPF_ADD: return "+=";
	case BPF_SUB: return "-=";
	case BPF_MUL: return "*=";
	case BPF_DIV: return "/=";
	case BPF_MOD: return "%=";
	case BPF_OR: return "|=";
	case BPF_AND: return "&=";
	case BPF_XOR: return "^=";
	case BPF_LSH: return "<<=";
	case BPF_RSH: return ">>=";
	case BPF_ARSH: return "s>>=";
	case BPF_MOV: return "=";
	case BPF_NEG: return "= -";
	default: return "?=";
	}
}

static const char *jump_symbol(int op)
{
	switch (op) {
	case BPF_JEQ: return "==";
	case BPF_JNE: return "!=";
	case BPF_JGT: return ">";
	case BPF_JGE: return ">=";
	case BPF_JLT: return "<";
	case BPF_JLE: return "<=";
	case BPF_JSGT: return "s>";
	case BPF_JSGE: return "s>=";
	case BPF_JSLT: return "s<";
	case BPF_JSLE: return "s<=";
	case BPF_JSET: return "&";
	default: return "?";
	}
}

static const char *size_name(int code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return "u8";
	case BPF_H: return "u16";
	case BPF_W: return "u32";
	default: return "u64";
	}
}

/* Shared by the IR dump and the final listing: jump targets are printed as
 * labels in the IR and as relative offsets in final code. */
static void print_insn(FILE *out, const struct ir_insn *insn, bool final)
{
	int class = BPF_CLASS(insn->code);
	if (insn->kind == IR_LABEL) {
		fprintf(out, "L%d:", insn->label);
		return;
	}
	if (insn->kind == IR_LD_MAP) {
		print_reg(out, insn->dst);
		fprintf(out, " = map[%lld]", (long long)insn->imm);
		if (insn->src == BPF_PSEUDO_MAP_VALUE)
			fprintf(out, " value +%d", insn->off);
		return;
	}
	if (insn->kind == IR_LD_IMM64) {
		print_reg(out, insn->dst);
		if (insn->src == BPF_PSEUDO_BTF_ID)
			fprintf(out, " = btf_var[%lld]", (long long)insn->imm);
		else
			fprintf(out, " = %lld ll", (long long)insn->imm);
		return;
	}
	if (insn->kind == IR_LD_FUNC) {
		print_reg(out, insn->dst);
		fprintf(out, final ? " = func %+lld" : " = subprogram %lld", (long long)insn->imm);
		return;
	}
	switch (class) {
	case BPF_ALU64:
	case BPF_ALU:
		print_reg(out, insn->dst);
		if (BPF_OP(insn->code) == BPF_END) {
			fprintf(out, " = bswap%lld ", (long long)insn->imm);
			print_reg(out, insn->dst);
			return;
		}
		if (BPF_OP(insn->code) == BPF_NEG) {
			fprintf(out, " = -");
			print_reg(out, insn->dst);
			return;
		}
		fprintf(out, " %s ", alu_symbol(BPF_OP(insn->code)));
		if (BPF_SRC(insn->code) == BPF_X)
			print_reg(out, insn->src);
		else
			fprintf(out, "%lld", (long long)insn->imm);
		return;
	case BPF_LDX:
		print_reg(out, insn->dst);
		fprintf(out, " = *(%s *)(", size_name(insn->code));
		print_reg(out, insn->src);
		fprintf(out, " %+d)", insn->off);
		return;
	case BPF_STX:
	case BPF_ST:
		fprintf(out, "*(%s *)(", size_name(insn->code));
		print_reg(out, insn->dst);
		fprintf(out, " %+d) = ", insn->off);
		if (class == BPF_STX)
			print_reg(out, insn->src);
		else
			fprintf(out, "%lld", (long long)insn->imm);
		return;
	case BPF_JMP: {
		int op = BPF_OP(insn->code);
		if (op == BPF_CALL) {
			fprintf(out, "call %lld", (long long)insn->imm);
			return;
		}
		if (op == BPF_EXIT) {
			fprintf(out, "exit");
			return;
		}
		if (op == BPF_JA) {
			if (final)
				fprintf(out, "goto %+d", insn->off);
			else
				fprintf(out, "goto L%d", insn->label);
			return;
		}
		fprintf(out, "if ");
		print_reg(out, insn->dst);
		fprintf(out, " %s ", jump_symbol(op));
		if (BPF_SRC(insn->code) == BPF_X)
			print_reg(out, insn->src);
		else
			fprintf(out, "%lld", (long long)insn->imm);
		if (final)
			fprintf(out, " goto %+d", insn->off);
		else
			fprintf(out, " goto L%d", insn->label);
		return;
	}
	default:
		fprintf(out, "(code 0x%02x)", insn->code);
	}
}

void ir_print_insn(FILE *out, const struct ir_insn *insn)
{
	print_insn(out, insn, false);
}

void ir_print(FILE *out, const struct ir_function *fn)
{
	for (int i = 0; i < fn->insns.count; i++) {
		const struct ir_insn *insn = &fn->insns.items[i];
		if (insn->kind != IR_LABEL)
			fputs("  ", out);
		ir_print_insn(out, insn);
		fputc('\n', out);
	}
}

void emit_print(FILE *out, const struct bpf_insn *insns, int count)
{
	for (int i = 0; i < count; i++) {
		const struct bpf_insn *raw = &insns[i];
		struct ir_insn insn = { .code = raw->code, .dst = raw->dst_reg, .src = raw->src_reg,
					.off = raw->off, .imm = raw->imm };
		if (raw->code == (BPF_LD | BPF_DW | BPF_IMM)) {
			if (raw->src_reg == BPF_PSEUDO_MAP_FD) {
				insn.kind = IR_LD_MAP;
			} else if (raw->src_reg == BPF_PSEUDO_MAP_VALUE) {
				insn.kind = IR_LD_MAP;
				insn.off = (int16_t)insns[i + 1].imm;
			} else if (raw->src_reg == BPF_PSEUDO_FUNC) {
				insn.kind = IR_LD_FUNC;
			} else {
				insn.kind = IR_LD_IMM64;
				insn.imm = (int64_t)(((uint64_t)(uint32_t)insns[i + 1].imm << 32) |
						     (uint32_t)raw->imm);
			}
		}
		fprintf(out, "%4d: ", i);
		print_insn(out, &insn, true);
		fputc('\n', out);
		if (raw->code == (BPF_LD | BPF_DW | BPF_IMM))
			i++;
	}
}

/* The verifier refuses programs with unreachable instructions, and the code
 * generator naturally leaves some (the code after exit(), a loop's break
 * path that nothing takes), so they are dropped here, before allocation. */
/* The first instruction at or after index i that is not a label. */
static int ir_skip_labels(const struct ir_function *fn, int i)
{
	while (i < fn->insns.count && fn->insns.items[i].kind == IR_LABEL)
		i++;
	return i;
}

void ir_simplify_jumps(struct ir_function *fn)
{
	int *label_at = xcalloc(fn->label_count + 1, sizeof(int));
	/* a few rounds: a cycle of jumps (which the verifier refuses anyway)
	 * must not keep this busy */
	for (int round = 0; round < 4; round++) {
		bool changed = false;
		for (int i = 0; i < fn->insns.count; i++)
			if (fn->insns.items[i].kind == IR_LABEL)
				label_at[fn->insns.items[i].label] = i;
		for (int i = 0; i < fn->insns.count; i++) {
			struct ir_insn *insn = &fn->insns.items[i];
			if (insn->kind != IR_JUMP)
				continue;
			/* a jump to a jump goes straight to where that one goes */
			for (int hops = 0; hops < 8; hops++) {
				int at = ir_skip_labels(fn, label_at[insn->label]);
				const struct ir_insn *next = at < fn->insns.count ? &fn->insns.items[at] : NULL;
				if (!next || next->kind != IR_JUMP || BPF_OP(next->code) != BPF_JA ||
				    next->label == insn->label || at == i)
					break;
				insn->label = next->label;
				changed = true;
			}
		}
		/* a jump, taken or not, to where it would fall through anyway */
		int kept = 0;
		for (int i = 0; i < fn->insns.count; i++) {
			const struct ir_insn *insn = &fn->insns.items[i];
			if (insn->kind == IR_JUMP) {
				int at = i + 1;
				bool lands_next = false;
				for (; at < fn->insns.count && fn->insns.items[at].kind == IR_LABEL; at++)
					if (fn->insns.items[at].label == insn->label)
						lands_next = true;
				if (lands_next) {
					changed = true;
					continue;
				}
			}
			fn->insns.items[kept++] = *insn;
		}
		fn->insns.count = kept;
		int before = fn->insns.count;
		ir_remove_unreachable(fn);
		if (!changed && fn->insns.count == before)
			break;
	}
	free(label_at);
}

/* `r <<= k; r >>= k` (or s>>=): an extension of the low bits of r. */
static bool is_extension(const struct ir_insn *shift, const struct ir_insn *back)
{
	return shift->kind == IR_INSN && back->kind == IR_INSN &&
	       shift->code == (BPF_ALU64 | BPF_LSH | BPF_K) &&
	       (back->code == (BPF_ALU64 | BPF_RSH | BPF_K) ||
		back->code == (BPF_ALU64 | BPF_ARSH | BPF_K)) &&
	       shift->dst == back->dst && shift->imm == back->imm;
}

void ir_drop_repeated_extensions(struct ir_function *fn)
{
	int kept = 0;
	for (int i = 0; i < fn->insns.count; i++) {
		const struct ir_insn *items = fn->insns.items;
		/* the same extension twice in a row (a signed load, then the
		 * conversion to the variable's type): the second changes nothing */
		if (kept >= 2 && i + 1 < fn->insns.count && is_extension(&items[i], &items[i + 1]) &&
		    is_extension(&items[kept - 2], &items[kept - 1]) &&
		    items[kept - 2].dst == items[i].dst && items[kept - 2].imm == items[i].imm &&
		    items[kept - 1].code == items[i + 1].code) {
			i++;
			continue;
		}
		fn->insns.items[kept++] = items[i];
	}
	fn->insns.count = kept;
}

/* Calls are the only way a program reaches the world (maps, the ring
 * buffer, the task); stores through any base but r10 write map values or a
 * caller's frame. Everything else only computes. */
bool ir_has_effect(const struct ir_function *fn)
{
	for (int i = 0; i < fn->insns.count; i++) {
		const struct ir_insn *insn = &fn->insns.items[i];
		if (insn->kind != IR_INSN)
			continue;
		int class = BPF_CLASS(insn->code);
		if (class == BPF_JMP && BPF_OP(insn->code) == BPF_CALL)
			return true;
		if ((class == BPF_ST || class == BPF_STX) && insn->dst != BPF_REG_10)
			return true;
	}
	return false;
}

void ir_remove_unreachable(struct ir_function *fn)
{
	int count = fn->insns.count;
	int *label_at = xcalloc(fn->label_count + 1, sizeof(int));
	for (int i = 0; i < count; i++)
		if (fn->insns.items[i].kind == IR_LABEL)
			label_at[fn->insns.items[i].label] = i;
	bool *reachable = xcalloc(count + 1, sizeof(bool));
	int *work = xcalloc(count + 1, sizeof(int));
	int pending = 0;
	if (count > 0) {
		work[pending++] = 0;
		reachable[0] = true;
	}
	while (pending > 0) {
		int i = work[--pending];
		const struct ir_insn *insn = &fn->insns.items[i];
		int next[2], next_count = 0;
		bool is_exit = insn->kind == IR_INSN && insn->code == (BPF_JMP | BPF_EXIT);
		if (insn->kind == IR_JUMP) {
			next[next_count++] = label_at[insn->label];
			if (BPF_OP(insn->code) != BPF_JA)
				next[next_count++] = i + 1;
		} else if (!is_exit) {
			next[next_count++] = i + 1;
		}
		for (int k = 0; k < next_count; k++) {
			if (next[k] < count && !reachable[next[k]]) {
				reachable[next[k]] = true;
				work[pending++] = next[k];
			}
		}
	}
	int kept = 0;
	for (int i = 0; i < count; i++)
		if (reachable[i] || fn->insns.items[i].kind == IR_LABEL)
			fn->insns.items[kept++] = fn->insns.items[i];
	fn->insns.count = kept;
	free(label_at);
	free(reachable);
	free(work);
}
