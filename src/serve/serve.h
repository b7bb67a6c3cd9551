/*
 * sonde serve: a program's maps as a Prometheus target.
 *
 * Two parts. metrics.c turns the maps of a loaded program into the text
 * exposition format (or OpenMetrics), reading them at the moment of the
 * scrape through the runtime's snapshots. http.c is the smallest HTTP/1.1
 * server that answers scrapes without ever blocking: every socket is
 * non-blocking, the run loop (runtime/run.c) polls them beside the ring
 * buffer, and each connection has a size budget and deadlines, so a slow or
 * hostile client costs a bounded slot and never holds up event draining.
 *
 * Nothing here prints: errors come back as -errno and one sentence.
 */
#ifndef SONDE_SERVE_H
#define SONDE_SERVE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "../common/program.h"
#include "../common/util.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9435"

/* --label @m=disk,op: the label names of a map's key parts. */
struct serve_label {
	char *map;      /* "@m" */
	char **names;
	int count;
};

struct serve_options {
	const char *listen;        /* ADDR:PORT, [IPv6]:PORT or :PORT; NULL: the default */
	const char *tool;          /* a tool's name: its metrics are sonde_TOOL_MAP */
	VEC(struct serve_label) labels;
};

/* Reads "@m=a,b" into options->labels. 0, or -EINVAL with *error. */
int serve_add_label(struct serve_options *options, const char *text, char **error);
void serve_options_free(struct serve_options *options);

/* ---- metrics.c ---- */

struct metrics;

/* The metric families of a program's maps: names, types and labels are
 * decided once, here. -EINVAL with *error for a --label that does not fit
 * the program (unknown map, wrong count, invalid name) or two maps whose
 * series would share a name. *skipped gets one line per map left out (its
 * values are not numbers). */
int metrics_new(const struct program *program, const struct serve_options *options,
		struct metrics **out, struct strbuf *skipped, char **error);
void metrics_free(struct metrics *metrics);
/* Appends every family with the maps' current values. */
int metrics_render(const struct metrics *metrics, struct strbuf *out, bool openmetrics);

/* ---- http.c ---- */

struct server;

/* At most this many pollfds a server asks for (listener + connections). */
#define SERVE_MAX_CONNECTIONS 64
#define SERVE_MAX_FDS (SERVE_MAX_CONNECTIONS + 1)

/* Binds and listens. -errno with *error (address in use, bad address). */
int server_new(const struct serve_options *options, struct server **out, char **error);
/* From now on /metrics renders these families. */
void server_set_metrics(struct server *server, const struct metrics *metrics);
/* The address actually bound ("127.0.0.1:9435"). */
const char *server_address(const struct server *server);
/* Fills fds with what to poll; returns how many. */
int server_poll_fds(struct server *server, struct pollfd *fds);
/* Milliseconds until the next connection deadline, at most cap. */
int server_timeout_ms(const struct server *server, int cap);
/* Does whatever the polled fds allow (fds as filled, with revents), and
 * closes connections past their deadlines. Never blocks. */
void server_handle(struct server *server, const struct pollfd *fds, int count);
void server_free(struct server *server);

#endif
