/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal interface between the runtime's parts: the loader (load.c), the
 * ring-buffer consumer (events.c) and the driver (run.c). Nothing outside
 * src/runtime/ includes this.
 */
#ifndef SONDE_RUNTIME_LOAD_H
#define SONDE_RUNTIME_LOAD_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runtime.h"

/* Default ring-buffer size; SONDE_RINGBUF_SIZE overrides it. */
#define LOAD_RINGBUF_SIZE_DEFAULT (1u << 20)

/* Reads SONDE_RINGBUF_SIZE (bytes; k/m suffixes allowed). Returns 0 and sets
 * *size (when unset: configured, the config block's size, else the
 * default), or -1 with *error set. The kernel needs a
 * power of two that is a multiple of the page size; other values are
 * rejected rather than silently rounded. */
int load_ringbuf_size(uint32_t configured, uint32_t *size, char **error);

/* Creates every map and loads every probe program, filling map->fd and
 * probe->prog_fd. Reports failures itself (on stderr, verifier rejections
 * with the source line through diag) and returns 0 or -1; on failure every
 * fd it opened is closed again. verbose > 0 prints per-probe statistics. */
int load_program(struct program *program, int verbose);

/* Closes every map and program fd of program (those not -1). */
void load_close(struct program *program);

/* ---- events.c ---- */

struct event_loop;

/* Sets up the ring-buffer consumer (when the program has a ring buffer) and
 * the lost-event counter; a picture (options->picture) is written to
 * picture_file, prepared by the caller. Returns NULL and prints on failure. */
struct event_loop *event_loop_new(struct program *program, const struct runtime_options *options,
				  FILE *out, struct outfile *picture_file);
void event_loop_free(struct event_loop *loop);
/* Waits up to timeout_ms for records and handles every one available; also
 * checks the lost counter at most every 100 ms. Returns records handled or
 * -errno (-EINTR when a signal arrived). */
int event_loop_poll(struct event_loop *loop, int timeout_ms);
/* A descriptor that polls readable when records wait (-1: no ring buffer),
 * for a caller that waits on other descriptors too (sonde serve). */
int event_loop_fd(const struct event_loop *loop);
/* The longest one poll spends on records before returning (default 100 ms). */
void event_loop_set_batch_budget(struct event_loop *loop, uint64_t budget_ns);
/* Batches end at once when *stop is set (a stop signal's flag). */
void event_loop_set_stop_flag(struct event_loop *loop, const volatile sig_atomic_t *stop);
/* Handles the records already in the ring buffer without waiting, for at
 * most one batch budget and not past a stop. */
void event_loop_drain(struct event_loop *loop);
/* Once nothing adds to the ring (the probes detached): handles every record
 * in it; after a stop signal (stopped), only for a moment, then consumes the
 * rest unprinted and says how many. */
void event_loop_drain_last(struct event_loop *loop, bool stopped);
/* Writes the picture (--svg, --heatmap) where it waits for the end: 0, or
 * -1 if any write of it failed. */
int event_loop_finish_picture(struct event_loop *loop);
/* Whether a program called exit(), from its map slot: without consuming the
 * records (they may wait for the banner). */
bool event_loop_exit_pending(struct event_loop *loop);
/* True once an exit() record was seen; *code is its exit code. */
bool event_loop_exit_requested(const struct event_loop *loop, int *code);
/* After exit(), records are consumed but not printed (as bpftrace does);
 * this makes them print again, for END. */
void event_loop_resume_output(struct event_loop *loop);
/* Reports lost events not yet reported; at_exit also prints the total. */
void event_loop_check_lost(struct event_loop *loop, bool at_exit);

/* ---- output.c ---- */

struct output_sink {
	int fd;
	bool owns_fd;   /* fclose() closes fd */
	int error;      /* errno of the first failed write (or close); 0 while all is well */
};

/* A stream over fd that writes all it is given, through signals and short
 * writes, and records the first error in sink (which must outlive it).
 * Returns NULL (errno set) when no stream can be made. */
FILE *output_sink_open(struct output_sink *sink, int fd, bool owns_fd);

#endif
