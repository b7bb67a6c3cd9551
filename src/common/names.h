/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Integers that print as names: syscall_name(n), signal_name(n),
 * errno_name(n), softirq_name(n), strerror(n), username, cgroup_path(id),
 * macaddr(p).
 * The value stays an integer in the kernel
 * (a map key, a comparison); only the printers turn it into text, through
 * the table its type carries (struct type.int_names). Unknown values print
 * the way the libbpf-tools tool that shows such names prints them.
 */
#ifndef SONDE_NAMES_H
#define SONDE_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct int_names {
	const char *what; /* "syscall", for messages */
	/* The name of value, or the tool's fallback text written into buf. */
	const char *(*name)(const struct int_names *names, int64_t value, char *buf, size_t size);
	const char *pattern; /* cgroup_path(id, "pattern"): the hierarchies to search */
};

extern const struct int_names int_names_syscall; /* "read"; "[unknown: 999]" as syscount */
extern const struct int_names int_names_signal;  /* "SIGKILL", "N/A" for 0; numbers above 31, as sigsnoop -n */
extern const struct int_names int_names_errno;   /* "ENOENT" for 2 or -2; the number when unknown */
extern const struct int_names int_names_softirq; /* "timer", as softirqs; the number when unknown */
extern const struct int_names int_names_strerror; /* "No such file or directory": strerror(3), as bpftrace */
extern const struct int_names int_names_username; /* "root": the uid's user name; the number when unknown */
/* "unified:/user.slice,...": the cgroup (v2 id) found in the hierarchies
 * under /sys/fs/cgroup, as bpftrace's cgroup_path(); copy it to set a pattern */
extern const struct int_names int_names_cgroup_path;
/* "DE:AD:BE:EF:0A:0B": six bytes held in an integer, the first in the lowest */
extern const struct int_names int_names_macaddr;

/* The x86-64 number of the syscall called name ("openat"), or -1. */
int syscall_number_of(const char *name);

/* The number of the signal called name ("SIGSTOP": 19; "STOP" too), or -1. */
int signal_number_of(const char *name);

/* The number of the error called name ("ENOENT": 2), or -1. */
int errno_number_of(const char *name);

/* Callers use a buffer this big (a cgroup path is the longest name). */
#define INT_NAME_MAX 4096

#endif
