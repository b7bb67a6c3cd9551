/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runtime tests on the real kernel, without the compiler: each case builds
 * a struct program by hand (maps, events, BEGIN/END programs written as raw
 * BPF instructions) and checks what runtime_run prints and returns.
 * Needs root; without it every case is skipped.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/program.h"
#include "common/types.h"
#include "runtime/runtime.h"

static int passed, failed;

static void check(bool ok, const char *name, const char *detail)
{
	if (ok) {
		printf("PASS %s\n", name);
		passed++;
	} else {
		printf("FAIL %s\n", name);
		if (detail)
			printf("    %s\n", detail);
		failed++;
	}
}

/* ---- instruction builders ---- */

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i;

	memset(&i, 0, sizeof(i));
	i.code = code;
	i.dst_reg = dst;
	i.src_reg = src;
	i.off = off;
	i.imm = imm;
	return i;
}

struct code {
	struct bpf_insn insns[128];
	struct src_loc locs[128];
	int count;
	int line; /* source line the next instructions come from */
};

static void emit(struct code *c, struct bpf_insn i)
{
	c->locs[c->count] = (struct src_loc){ c->line, 9, 6 };
	c->insns[c->count++] = i;
}

static void emit_store_imm(struct code *c, int16_t off, int32_t imm)
{
	emit(c, insn(BPF_ST | BPF_MEM | BPF_DW, BPF_REG_10, 0, off, imm));
}

static void emit_map(struct code *c, uint8_t dst, int map_id)
{
	emit(c, insn(BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, map_id));
	emit(c, insn(0, 0, 0, 0, 0));
}

static void emit_mov_reg(struct code *c, uint8_t dst, uint8_t src)
{
	emit(c, insn(BPF_ALU64 | BPF_MOV | BPF_X, dst, src, 0, 0));
}

static void emit_mov_imm(struct code *c, uint8_t dst, int32_t imm)
{
	emit(c, insn(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm));
}

static void emit_add_imm(struct code *c, uint8_t dst, int32_t imm)
{
	emit(c, insn(BPF_ALU64 | BPF_ADD | BPF_K, dst, 0, 0, imm));
}

static void emit_call(struct code *c, int helper)
{
	emit(c, insn(BPF_JMP | BPF_CALL, 0, 0, 0, helper));
}

static void emit_exit(struct code *c)
{
	emit_mov_imm(c, BPF_REG_0, 0);
	emit(c, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
}

/* Sends the record at fp+off (size bytes) to the ring buffer. */
static void emit_output(struct code *c, int ringbuf_id, int16_t off, int size)
{
	emit_map(c, BPF_REG_1, ringbuf_id);
	emit_mov_reg(c, BPF_REG_2, BPF_REG_10);
	emit_add_imm(c, BPF_REG_2, off);
	emit_mov_imm(c, BPF_REG_3, size);
	emit_mov_imm(c, BPF_REG_4, 0);
	emit_call(c, BPF_FUNC_ringbuf_output);
}

/* ---- program builders ---- */

enum { MAP_RINGBUF, MAP_LOST, MAP_CONFIG, MAP_A, MAP_COUNT };

static void add_map(struct program *p, const char *name, enum map_role role, uint32_t type,
		    uint32_t key_size, uint32_t value_size, uint32_t max_entries,
		    struct type *value_type)
{
	struct map_desc map;

	memset(&map, 0, sizeof(map));
	map.id = p->maps.count;
	map.name = strdup(name);
	map.role = role;
	map.value_type = value_type;
	map.bpf_map_type = type;
	map.key_size = key_size;
	map.value_size = value_size;
	map.max_entries = max_entries;
	map.fd = -1;
	vec_push(&p->maps, map);
}

static int add_event(struct program *p, enum event_kind kind, const char *format,
		     struct type *arg_type, int record_size)
{
	struct event_desc event;

	memset(&event, 0, sizeof(event));
	event.kind = kind;
	event.format = format ? strdup(format) : NULL;
	event.record_size = record_size;
	if (arg_type) {
		event.arg_count = 1;
		event.args = calloc(1, sizeof(*event.args));
		event.args[0].type = arg_type;
		event.args[0].offset = 8;
	}
	vec_push(&p->events, event);
	return p->events.count - 1;
}

static void add_probe(struct program *p, const char *name, enum probe_role role,
		      const struct code *c)
{
	struct probe_program probe;

	memset(&probe, 0, sizeof(probe));
	probe.name = strdup(name);
	probe.role = role;
	probe.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	probe.insn_count = c->count;
	probe.insns = malloc(sizeof(*probe.insns) * (size_t)c->count);
	memcpy(probe.insns, c->insns, sizeof(*probe.insns) * (size_t)c->count);
	probe.insn_locs = malloc(sizeof(*probe.insn_locs) * (size_t)c->count);
	memcpy(probe.insn_locs, c->locs, sizeof(*probe.insn_locs) * (size_t)c->count);
	probe.prog_fd = -1;
	vec_push(&p->probes, probe);
}

static void base_program(struct program *p, const char *text)
{
	memset(p, 0, sizeof(*p));
	p->source.filename = "stdin";
	p->source.text = text;
	add_map(p, ".ringbuf", MAP_ROLE_RINGBUF, BPF_MAP_TYPE_RINGBUF, 0, 0, 0, NULL);
	add_map(p, ".lost", MAP_ROLE_LOST, BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 1, NULL);
	add_map(p, ".config", MAP_ROLE_CONFIG, BPF_MAP_TYPE_ARRAY, 4,
		sizeof(struct program_config), 1, NULL);
	add_map(p, "@a", MAP_ROLE_USER, BPF_MAP_TYPE_HASH, 8, 8, 16, type_int(8, true));
	p->ringbuf_map_id = MAP_RINGBUF;
	p->lost_map_id = MAP_LOST;
	p->config_map_id = MAP_CONFIG;
	p->scratch_map_id = -1;
}

static void free_program(struct program *p)
{
	for (int i = 0; i < p->maps.count; i++)
		free(p->maps.items[i].name);
	for (int i = 0; i < p->events.count; i++) {
		free(p->events.items[i].format);
		free(p->events.items[i].args);
	}
	for (int i = 0; i < p->probes.count; i++) {
		free(p->probes.items[i].name);
		free(p->probes.items[i].insns);
		free(p->probes.items[i].insn_locs);
	}
	free(p->maps.items);
	free(p->events.items);
	free(p->probes.items);
}

/* The file behind fd as a string (at most size - 1 bytes). */
static void read_back(FILE *file, char *text, size_t size)
{
	size_t n;

	rewind(file);
	n = fread(text, 1, size - 1, file);
	text[n] = '\0';
	fclose(file);
}

/* Runs p with its output (-o), stdout and stderr each captured. */
static int run_captured_all(struct program *p, char *out, size_t out_size, char *err,
			    size_t err_size, char *std_out, size_t std_out_size)
{
	char out_path[] = "/tmp/sonde-test-runtime-XXXXXX";
	int out_fd = mkstemp(out_path);
	FILE *out_file;
	FILE *err_file = tmpfile();
	FILE *std_file = tmpfile();
	struct runtime_options options;
	int saved_stderr = dup(2);
	int saved_stdout = dup(1);
	int code;

	memset(&options, 0, sizeof(options));
	options.output_path = out_path;
	options.quiet = true;
	options.child_release_fd = -1;
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(err_file), 2);
	dup2(fileno(std_file), 1);
	code = runtime_run(p, &options);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_stderr, 2);
	dup2(saved_stdout, 1);
	close(saved_stderr);
	close(saved_stdout);

	/* runtime_run opens -o itself (once the programs have loaded) */
	out_file = fopen(out_path, "r");
	unlink(out_path);
	close(out_fd);
	if (out_file)
		read_back(out_file, out, out_size);
	else
		out[0] = '\0';
	read_back(err_file, err, err_size);
	read_back(std_file, std_out, std_out_size);
	return code;
}

static int run_captured(struct program *p, char *out, size_t out_size, char *err,
			size_t err_size)
{
	char std_out[256];

	return run_captured_all(p, out, out_size, err, err_size, std_out, sizeof(std_out));
}

/*
 * BEGIN { printf("hello %d\n", 42); @a = 5; exit(); printf("after\n"); }
 * END { printf("end\n"); }
 * The record after exit() must not print; END's must.
 */
static void test_begin_end(void)
{
	struct program p;
	struct code begin = { .line = 1 }, end = { .line = 1 };
	char out[4096], err[4096], std_out[256];
	int hello, end_event, exit_event, after;
	int code;

	base_program(&p, "BEGIN { printf(\"hello %d\\n\", 42); @a = 5; exit(); } END { }");
	hello = add_event(&p, EVENT_PRINTF, "hello %d\n", type_int(8, true), 16);
	end_event = add_event(&p, EVENT_PRINTF, "end\n", NULL, 8);
	exit_event = add_event(&p, EVENT_EXIT, NULL, NULL, 8);
	after = add_event(&p, EVENT_PRINTF, "after\n", NULL, 8);

	emit_store_imm(&begin, -16, hello);
	emit_store_imm(&begin, -8, 42);
	emit_output(&begin, MAP_RINGBUF, -16, 16);
	/* @a = 5 */
	emit_store_imm(&begin, -24, 0);
	emit_store_imm(&begin, -32, 5);
	emit_map(&begin, BPF_REG_1, MAP_A);
	emit_mov_reg(&begin, BPF_REG_2, BPF_REG_10);
	emit_add_imm(&begin, BPF_REG_2, -24);
	emit_mov_reg(&begin, BPF_REG_3, BPF_REG_10);
	emit_add_imm(&begin, BPF_REG_3, -32);
	emit_mov_imm(&begin, BPF_REG_4, 0);
	emit_call(&begin, BPF_FUNC_map_update_elem);
	emit_store_imm(&begin, -40, exit_event);
	emit_output(&begin, MAP_RINGBUF, -40, 8);
	emit_store_imm(&begin, -48, after);
	emit_output(&begin, MAP_RINGBUF, -48, 8);
	emit_exit(&begin);
	add_probe(&p, "BEGIN", PROBE_ROLE_BEGIN, &begin);

	emit_store_imm(&end, -8, end_event);
	emit_output(&end, MAP_RINGBUF, -8, 8);
	emit_exit(&end);
	add_probe(&p, "END", PROBE_ROLE_END, &end);

	code = run_captured_all(&p, out, sizeof(out), err, sizeof(err), std_out, sizeof(std_out));
	check(code == 0, "begin-end: exit code 0", err);
	/* With -o FILE everything, the blank lines before the maps included,
	 * goes to the file. */
	check(std_out[0] == '\0', "begin-end: stdout untouched", std_out);
	check(strcmp(out, "hello 42\nend\n\n\n@a: 5\n") == 0, "begin-end: output", out);
	check(err[0] == '\0', "begin-end: nothing on stderr", err);
	free_program(&p);
}

/* A BEGIN program that bumps the lost counter by 3: reported at exit. */
static void test_lost_reported(void)
{
	struct program p;
	struct code begin = { .line = 1 };
	char out[4096], err[4096];

	base_program(&p, "BEGIN { }");
	emit_store_imm(&begin, -8, 0);
	emit_map(&begin, BPF_REG_1, MAP_LOST);
	emit_mov_reg(&begin, BPF_REG_2, BPF_REG_10);
	emit_add_imm(&begin, BPF_REG_2, -8);
	emit_call(&begin, BPF_FUNC_map_lookup_elem);
	emit(&begin, insn(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 3, 0));
	emit(&begin, insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 0, 0));
	emit_add_imm(&begin, BPF_REG_1, 3);
	emit(&begin, insn(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0));
	emit_exit(&begin);
	add_probe(&p, "BEGIN", PROBE_ROLE_BEGIN, &begin);

	run_captured(&p, out, sizeof(out), err, sizeof(err));
	check(strstr(err, "Lost 3 events") != NULL, "lost: counter reported", err);
	free_program(&p);
}

/* Dereferencing a plain number: the verifier says no, and the report names
 * the probe and quotes the source line of the failing instruction. */
static void test_verifier_rejection(void)
{
	struct program p;
	struct code begin = { .line = 1 };
	char out[4096], err[8192];
	int code;

	base_program(&p, "BEGIN { }\nBEGIN { $x = @undefined_thing; }");
	emit_mov_imm(&begin, BPF_REG_0, 0);
	begin.line = 2;
	emit(&begin, insn(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_0, 0, 0));
	emit(&begin, insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0));
	add_probe(&p, "BEGIN", PROBE_ROLE_BEGIN, &begin);

	code = run_captured(&p, out, sizeof(out), err, sizeof(err));
	check(code == 1, "verifier: exit code 1", err);
	check(strstr(err, "stdin:2:9: error:") != NULL && strstr(err, "BEGIN") != NULL,
	      "verifier: location and probe named", err);
	check(strstr(err, "BEGIN { $x = @undefined_thing; }\n        ^") != NULL,
	      "verifier: source line quoted with caret", err);
	check(strstr(err, "invalid mem access") != NULL, "verifier: reason shown", err);
	free_program(&p);
}

/* clear() and zero() events act on the map; print() prints it. */
static void test_map_events(void)
{
	struct program p;
	struct code begin = { .line = 1 };
	char out[4096], err[4096];
	int print_event, zero_event, clear_event;

	base_program(&p, "BEGIN { }");
	print_event = add_event(&p, EVENT_PRINT_MAP, NULL, NULL, 8);
	p.events.items[print_event].map_id = MAP_A;
	zero_event = add_event(&p, EVENT_ZERO_MAP, NULL, NULL, 8);
	p.events.items[zero_event].map_id = MAP_A;
	clear_event = add_event(&p, EVENT_CLEAR_MAP, NULL, NULL, 8);
	p.events.items[clear_event].map_id = MAP_A;

	/* @a = 7; print(@a); zero(@a); print(@a); clear(@a) */
	emit_store_imm(&begin, -24, 0);
	emit_store_imm(&begin, -32, 7);
	emit_map(&begin, BPF_REG_1, MAP_A);
	emit_mov_reg(&begin, BPF_REG_2, BPF_REG_10);
	emit_add_imm(&begin, BPF_REG_2, -24);
	emit_mov_reg(&begin, BPF_REG_3, BPF_REG_10);
	emit_add_imm(&begin, BPF_REG_3, -32);
	emit_mov_imm(&begin, BPF_REG_4, 0);
	emit_call(&begin, BPF_FUNC_map_update_elem);
	emit_store_imm(&begin, -40, print_event);
	emit_output(&begin, MAP_RINGBUF, -40, 8);
	emit_store_imm(&begin, -48, zero_event);
	emit_output(&begin, MAP_RINGBUF, -48, 8);
	emit_output(&begin, MAP_RINGBUF, -40, 8);
	emit_store_imm(&begin, -56, clear_event);
	emit_output(&begin, MAP_RINGBUF, -56, 8);
	emit_exit(&begin);
	add_probe(&p, "BEGIN", PROBE_ROLE_BEGIN, &begin);

	run_captured(&p, out, sizeof(out), err, sizeof(err));
	check(strncmp(out, "@a: 7\n@a: 0\n\n\n", 14) == 0, "map events: print, zero, clear", out);
	free_program(&p);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP runtime tests need root\n");
		printf("0 passed, 0 failed\n");
		return 0;
	}
	test_begin_end();
	test_lost_reported();
	test_verifier_rejection();
	test_map_events();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
