/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sonde serve: a program's maps as a Prometheus target.
 *
 * Parts. metrics.c turns the maps of a loaded program into the text
 * exposition format (or OpenMetrics), reading them at the moment of the
 * scrape through the runtime's snapshots. http.c is the smallest HTTP/1.1
 * server that answers scrapes without ever blocking: every socket is
 * non-blocking, the run loop (runtime/run.c) polls them beside the ring
 * buffer, and each connection has a size budget and deadlines, so a slow or
 * hostile client costs a bounded slot and never holds up event draining.
 * webconfig.c reads the optional --web.config.file (exporter-toolkit's
 * format); tls.c serves HTTPS through OpenSSL with the same non-blocking
 * loop, and auth.c checks basic authentication's bcrypt hashes on a
 * worker thread so that the loop never waits for them.
 *
 * Nothing here prints: errors come back as -errno and one sentence.
 */
#ifndef SONDE_SERVE_H
#define SONDE_SERVE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/program.h"
#include "../common/util.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:9435"

/* --label @m=disk,op: the label names of a map's key parts. */
struct serve_label {
	char *map;      /* "@m" */
	char **names;
	int count;
};

struct web_config;

struct serve_options {
	const char *listen;        /* ADDR:PORT, [IPv6]:PORT or :PORT; NULL: the default */
	struct web_config *web;    /* --web.config.file, read; NULL: plain HTTP, no auth */
	const char *tool;          /* a tool's name: its metrics are sonde_TOOL_MAP */
	VEC(struct serve_label) labels;
};

/* Reads "@m=a,b" into options->labels. 0, or -EINVAL with *error. */
int serve_add_label(struct serve_options *options, const char *text, char **error);
void serve_options_free(struct serve_options *options);

/* ---- webconfig.c ---- */

struct web_setting {
	char *value;            /* NULL: not in the file; a *_file is a path as usable */
	int line;
};

struct web_user {
	char *name;
	char *hash;             /* bcrypt, checked for its shape */
	int line;
};

struct tls_context;

struct web_config {
	char *path;
	int tls_line;           /* of tls_server_config (0: none) */
	struct web_setting cert_file, key_file, client_ca_file, client_auth_type;
	struct web_setting min_version, max_version, prefer_server_cipher_suites;
	struct web_setting http2;       /* accepted; sonde serves HTTP/1.1 only */
	VEC(struct web_user) users;
	struct tls_context *tls;        /* NULL: plain HTTP */
};

/* Reads and checks the file, and what it names (certificate, key, CA file,
 * hashes). -errno with *error: "FILE:LINE: error: ..." for what is wrong
 * inside, "FILE: error: ..." when it cannot be read. */
int web_config_load(const char *path, struct web_config **out, char **error);
/* The same from text (path names it in errors and anchors relative file
 * names); what it names is not opened. */
int web_config_parse(const char *path, char *text, struct web_config **out, char **error);
void web_config_free(struct web_config *config);
/* "FILE:LINE: error: ..." */
char *web_config_error(const struct web_config *config, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- tls.c ---- */

struct tls_session;

/* The TLS context of tls_server_config; *out NULL when there is none. */
int tls_context_new(const struct web_config *config, struct tls_context **out, char **error);
void tls_context_free(struct tls_context *tls);
/* A server session on a non-blocking socket; NULL if OpenSSL fails. */
struct tls_session *tls_session_new(struct tls_context *tls, int fd);
void tls_session_free(struct tls_session *session);
/* Each call returns what it did, or -EAGAIN with the poll event to wait
 * for in *events, or -EPROTO when the client spoke plain HTTP, or -EIO when
 * the connection is lost. tls_handshake returns 1 once it is done;
 * tls_recv 0 when the client closed. */
int tls_handshake(struct tls_session *session, short *events);
ssize_t tls_recv(struct tls_session *session, void *data, size_t length, short *events);
ssize_t tls_send(struct tls_session *session, const void *data, size_t length, short *events);
/* Bytes already decrypted that poll() cannot see. */
bool tls_has_pending(const struct tls_session *session);
/* Sends close_notify if the socket takes it now. */
void tls_close_notify(struct tls_session *session);

/* ---- auth.c ---- */

struct auth;

enum auth_verdict {
	AUTH_OK,        /* no users configured, or credentials known good */
	AUTH_DENIED,    /* none, malformed, or known bad: 401 */
	AUTH_WAIT,      /* being checked: park the request until auth_fd is readable */
	AUTH_LIMITED,   /* new credentials past the checks' budget or queue: 429 */
	AUTH_BUSY,      /* the digest could not be made: 503 */
};

struct auth_stats {
	unsigned long checks;     /* bcrypt checks queued */
	unsigned long cache_hits; /* requests answered from the cache */
	unsigned long limited;    /* requests refused for the checks' budget or queue */
};

/* Is this a bcrypt hash crypt_r() can check ($2a$, $2b$, $2y$)? */
bool auth_hash_valid(const char *hash);
/* The checker of config's users (with its worker thread); *out NULL when
 * there are no users. */
int auth_new(const struct web_config *config, struct auth **out, char **error);
void auth_free(struct auth *auth);
/* The Authorization header's value (NULL: none). digest receives the key
 * (32 bytes) to pass to auth_waiting after AUTH_WAIT. */
enum auth_verdict auth_check(struct auth *auth, const char *header, size_t length,
			     unsigned char *digest);
/* Readable when checks are done; auth_collect then takes their answers
 * (true if there were any). */
int auth_fd(const struct auth *auth);
bool auth_collect(struct auth *auth);
/* Is this digest's check still queued or running? */
bool auth_waiting(struct auth *auth, const unsigned char *digest);
const struct auth_stats *auth_stats(const struct auth *auth);

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

/* At most this many pollfds a server asks for (listener, the credential
 * checker's eventfd, connections). */
#define SERVE_MAX_CONNECTIONS 64
#define SERVE_MAX_FDS (SERVE_MAX_CONNECTIONS + 2)

/* Binds and listens. -errno with *error (address in use, bad address). */
int server_new(const struct serve_options *options, struct server **out, char **error);
/* From now on /metrics renders these families. */
void server_set_metrics(struct server *server, const struct metrics *metrics);
/* The address actually bound ("127.0.0.1:9435"). */
const char *server_address(const struct server *server);
/* "https" or "http" */
const char *server_scheme(const struct server *server);
/* Fills fds with what to poll; returns how many. */
int server_poll_fds(struct server *server, struct pollfd *fds);
/* Milliseconds until the next connection deadline, at most cap. */
int server_timeout_ms(const struct server *server, int cap);
/* Does whatever the polled fds allow (fds as filled, with revents), and
 * closes connections past their deadlines. Never blocks. */
void server_handle(struct server *server, const struct pollfd *fds, int count);
void server_free(struct server *server);

#endif
