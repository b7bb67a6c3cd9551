/* SPDX-License-Identifier: Apache-2.0 */
/*
 * -c CMD: the command sonde runs once its probes are attached. It is
 * forked before compiling (cpid is a value programs may use), held stopped
 * on a pipe, and released by runtime_run once tracing has started, or
 * abandoned when the program never gets that far.
 */
#ifndef SONDE_CHILD_H
#define SONDE_CHILD_H

#include <sys/types.h>

/* Forks CMD's process (words split at whitespace, no quoting, as bpftrace
 * does) held before its exec. Returns its pid and *release_fd, the write
 * end of the pipe it waits on (one byte: go; end of file: give up); or
 * -errno with *error, one sentence naming -c. */
pid_t child_spawn(const char *command, int *release_fd, char **error);
/* Lets a child that will not be released go, and reaps it. */
void child_abandon(pid_t pid, int release_fd);

#endif
