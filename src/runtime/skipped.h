/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Probe runs the kernel skipped.
 *
 * The kernel runs one BPF tracing program at a time on a CPU: an event that
 * fires while another program is running there (in an interrupt that came
 * during it, or from inside one of its helpers, such as the signal a
 * signal() sends) does not run its program. The kernel counts these per
 * program (bpf_prog_info.recursion_misses, since Linux 6.7 for tracepoints
 * and kprobes); nothing else tells the user that events went missing, so
 * the runtime reads the counts and reports their growth as lost runs.
 */
#ifndef SONDE_SKIPPED_H
#define SONDE_SKIPPED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct program;
struct skipped_runs;

/* Tracks the loaded probes of program (their prog_fd set), which must
 * outlive it. */
struct skipped_runs *skipped_runs_new(const struct program *program);
void skipped_runs_free(struct skipped_runs *runs);

/* Reads the counts (at most once a second unless at_exit) and writes a line
 * on stderr for the runs skipped since the last line: at once the first
 * time, then at most every 5 s, and at exit the rest, with the total when it
 * took several lines. out is flushed first so the line lands after the
 * output it follows. */
void skipped_runs_check(struct skipped_runs *runs, bool at_exit, FILE *out);

/* The runs the kernel skipped so far in program's probes, read now, each
 * loaded program counted once (sonde serve's counter). */
uint64_t skipped_runs_total(const struct program *program);

#endif
