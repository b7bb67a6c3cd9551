/* SPDX-License-Identifier: Apache-2.0 */
/*
 * -l [pattern]: the probes providers offer, or the kernel's types. A
 * pattern that starts with a provider's name or alias goes to that provider
 * only (spelled with the canonical name, which is what providers match
 * against); any other pattern goes to every provider, and one without a
 * wildcard matches names that contain it. With -p, providers that can list
 * the probes of one process (usdt) list those instead. 'struct NAME',
 * 'union NAME' and 'enum NAME' (wildcards allowed) list the kernel's types
 * of that name as bpftrace does: the names, and with -v their definitions.
 */
#ifndef SONDE_LISTING_H
#define SONDE_LISTING_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/util.h"

/* Writes the list to out; a provider's error goes to errors, one line each.
 * 0, or 1 when a provider failed. */
int probes_list(const char *pattern, pid_t pid, bool verbose, FILE *out, struct strbuf *errors);

#endif
