/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP side of sonde serve: GET /metrics, and nothing a client can
 * use to stall the tracer.
 *
 * The server never blocks and never owns the process: the run loop polls
 * the listening socket and the connections (server_poll_fds) beside the
 * ring buffer, and server_handle then does what each ready socket allows,
 * one non-blocking read or write at a time. A response is rendered whole
 * into memory when its request is complete and written as the client
 * takes it, so a scraper that stops reading holds a buffer, not the loop.
 *
 * The limits that make that true:
 *  - at most SERVE_MAX_CONNECTIONS connections, and a new one always gets a
 *    slot: when all are taken, another is dropped (server_slot), first
 *    those that cost the most and give the least: a connection lingering
 *    after its response, a writer whose client has stopped reading, a
 *    client idle for a second, a request parked for its credentials, then
 *    the oldest. So neither clients that connect and send nothing nor
 *    clients that ask and never read can lock a scraper out;
 *  - a request head of at most SERVE_HEAD_MAX bytes and SERVE_HEADERS_MAX
 *    lines (431 otherwise); requests with a body are answered and closed;
 *  - a complete request head within SERVE_REQUEST_TIMEOUT_NS of the
 *    connection opening or its last response (the idle and the slowloris
 *    timeout are the same deadline: trickling bytes does not extend it);
 *  - a response written within SERVE_WRITE_TIMEOUT_NS, and closed when the
 *    client takes none of it for SERVE_STALL_TIMEOUT_NS;
 *  - one response in memory per connection (pipelined requests wait in the
 *    head buffer, unrendered), SERVE_SEND_BUFFER bytes queued in the
 *    kernel for it, and at most SERVE_PENDING_MAX bytes of response
 *    buffers in all: past that, writers whose clients have stopped
 *    reading are dropped to make room, or the request gets 503;
 *  - after a response that ends the connection, at most SERVE_LINGER_NS of
 *    reading and discarding what the client still sends (closing a socket
 *    with unread data resets it, and the client could lose the response).
 * Anything but GET and HEAD is 405, any path but / and /metrics 404.
 *
 * HTTP/1.1 keep-alive is kept (Prometheus reuses its connection); a
 * request that says `Connection: close`, or HTTP/1.0, is answered and
 * closed. Pipelined requests are answered in order.
 *
 * With a web config (--web.config.file), two more states. HTTPS: the
 * connection first completes its TLS handshake (tls.c), one non-blocking
 * step at a time within the request deadline, and every read and write
 * goes through the session, which may want the other poll event than the
 * one the HTTP state suggests. Handshakes cost the loop real CPU (a key
 * exchange and a signature), so a round spends at most
 * SERVE_HANDSHAKE_BUDGET_NS on them and leaves the rest for the next one.
 * Basic authentication: a complete request whose credentials are not yet
 * known is parked (not read, not answered) while auth.c checks them on its
 * thread, and answered when the checker's eventfd says the answer is in.
 */
#include "serve/serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define SERVE_HEAD_MAX 8192
#define SERVE_HEADERS_MAX 64
#define SERVE_REQUEST_TIMEOUT_NS (10ull * 1000000000ull)
/* Prometheus' default scrape_timeout: past it the scraper has given up */
#define SERVE_WRITE_TIMEOUT_NS (10ull * 1000000000ull)
/* a client that takes no byte of its response for this long is gone or
 * hostile; one reading at loopback or LAN speed never comes near it */
#define SERVE_STALL_TIMEOUT_NS (2ull * 1000000000ull)
/* when slots or memory run out: a writer stalled this long may be dropped,
 * and a client idle this long between requests */
#define SERVE_STALL_EVICT_NS (100ull * 1000000ull)
#define SERVE_IDLE_EVICT_NS (1000ull * 1000000ull)
/* the response buffers of all connections together (one scrape of 10,000
 * keys is about 0.4 MiB) */
#define SERVE_PENDING_MAX (64u << 20)
/* The kernel's send buffer of a connection (it doubles it for its own
 * bookkeeping). Autotuned, it grows to 4 MiB, and a client that pipelines
 * requests and never reads gets that many bytes of answers queued before
 * its connection stalls; fixed, it stalls after a few, and a scrape still
 * goes out in two or three writes. */
#define SERVE_SEND_BUFFER (256 << 10)
#define SERVE_LINGER_NS (1000000000ull)
/* connections taken per wake-up, so a flood of them cannot hold the loop */
#define SERVE_ACCEPTS_PER_ROUND 16
/* TLS handshake work per round: a handshake costs sonde 0.6 ms of CPU with a
 * P-256 key, 0.9 ms with RSA-2048 (measured on loopback) */
#define SERVE_HANDSHAKE_BUDGET_NS (2ull * 1000000ull)
#define SERVE_DIGEST_SIZE 32
/* poll_slots values other than a connection's index */
#define SLOT_LISTENER (-1)
#define SLOT_AUTH (-2)

struct connection {
	int fd;                 /* -1: a free slot */
	bool writing;           /* a response is being sent */
	bool close_after;       /* close once it is sent */
	bool draining;          /* sent and shut down for writing: reading what the
				 * client still sends, so that closing does not reset
				 * the connection before it has read the response */
	char *head;             /* request bytes received (SERVE_HEAD_MAX) */
	size_t received;
	struct strbuf response;
	size_t sent;
	uint64_t deadline_ns;   /* request complete / response sent by then */
	uint64_t waiting_since_ns; /* when it began waiting for a request */
	uint64_t progress_ns;   /* when the client last took response bytes (or
				 * the response or the parking began) */
	struct tls_session *tls;  /* HTTPS: the session; NULL for plain HTTP */
	bool handshaking;       /* the TLS handshake is not complete */
	short tls_events;       /* the poll event the last TLS call waits for (0: none) */
	bool parked;            /* a complete request waits for its credentials' check */
	bool checked;           /* its credentials went through a check */
	unsigned char auth_digest[SERVE_DIGEST_SIZE]; /* which check */
};

struct server {
	int listen_fd;
	char *address;
	const struct metrics *metrics;
	struct tls_context *tls;        /* the web config's; NULL: plain HTTP */
	struct auth *auth;              /* NULL: no basic authentication */
	struct connection connections[SERVE_MAX_CONNECTIONS];
	int poll_slots[SERVE_MAX_FDS]; /* the connection each polled fd is, or SLOT_* */
	int polled;
	unsigned rounds;                /* server_handle calls, to rotate who goes first */
};

/* A parsed request head: what the server looks at. */
struct request {
	char method[16];
	char path[256];
	bool http10;
	bool close;             /* Connection: close */
	bool has_body;          /* Content-Length other than 0, or Transfer-Encoding */
	bool openmetrics;       /* Accept names application/openmetrics-text */
	bool path_too_long;
	const char *authorization; /* the Authorization header's value (in the head); NULL: none */
	size_t authorization_length;
};

/* ---- listening ---- */

/* "host:port", "[v6]:port" or ":port" (every address). */
static int server_split_address(const char *text, char **host, char **port, char **error)
{
	const char *colon = strrchr(text, ':');

	*host = *port = NULL;
	if (!colon || !colon[1]) {
		*error = xasprintf("--listen needs ADDRESS:PORT, not '%s'", text);
		return -EINVAL;
	}
	if (text[0] == '[') {
		if (colon == text || colon[-1] != ']') {
			*error = xasprintf("--listen needs [IPV6]:PORT, not '%s'", text);
			return -EINVAL;
		}
		*host = xstrndup(text + 1, (size_t)(colon - text - 2));
	} else if (colon != text) {
		*host = xstrndup(text, (size_t)(colon - text));
	}
	*port = xstrdup(colon + 1);
	for (const char *p = *port; *p; p++) {
		if (*p < '0' || *p > '9') {
			*error = xasprintf("--listen: '%s' is not a port number", *port);
			free(*host);
			free(*port);
			return -EINVAL;
		}
	}
	return 0;
}

static char *server_describe(const struct sockaddr_storage *address)
{
	char host[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (address->ss_family == AF_INET6) {
		const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
		inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof(host));
		port = ntohs(v6->sin6_port);
		return xasprintf("[%s]:%d", host, port);
	}
	const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
	inet_ntop(AF_INET, &v4->sin_addr, host, sizeof(host));
	port = ntohs(v4->sin_port);
	return xasprintf("%s:%d", host, port);
}

int server_new(const struct serve_options *options, struct server **out, char **error)
{
	const char *listen_text = options->listen ? options->listen : SERVE_DEFAULT_LISTEN;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *found = NULL;
	char *host, *port;
	int err, fd = -1, last_errno = 0;

	*out = NULL;
	err = server_split_address(listen_text, &host, &port, error);
	if (err)
		return err;
	err = getaddrinfo(host, port, &hints, &found);
	if (err) {
		*error = xasprintf("--listen %s: %s", listen_text, gai_strerror(err));
		free(host);
		free(port);
		return -EINVAL;
	}
	for (struct addrinfo *ai = found; ai && fd < 0; ai = ai->ai_next) {
		int one = 1;
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			last_errno = errno;
			continue;
		}
		/* a restarted exporter must get its port back at once */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
			last_errno = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(found);
	free(host);
	free(port);
	if (fd < 0) {
		*error = xasprintf("cannot listen on %s: %s", listen_text, strerror(last_errno));
		return -(last_errno ? last_errno : EINVAL);
	}

	struct server *server = xcalloc(1, sizeof(*server));
	struct sockaddr_storage bound;
	socklen_t length = sizeof(bound);
	server->listen_fd = fd;
	if (options->web) {
		server->tls = options->web->tls;
		err = auth_new(options->web, &server->auth, error);
		if (err) {
			close(fd);
			free(server);
			return err;
		}
	}
	if (getsockname(fd, (struct sockaddr *)&bound, &length) == 0)
		server->address = server_describe(&bound);
	else
		server->address = xstrdup(listen_text);
	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		server->connections[i].fd = -1;
		strbuf_init(&server->connections[i].response);
	}
	*out = server;
	return 0;
}

void server_set_metrics(struct server *server, const struct metrics *metrics)
{
	server->metrics = metrics;
}

const char *server_address(const struct server *server)
{
	return server->address;
}

const char *server_scheme(const struct server *server)
{
	return server->tls ? "https" : "http";
}

static void server_close(struct connection *conn)
{
	if (conn->fd >= 0)
		close(conn->fd);
	conn->fd = -1;
	conn->draining = false;
	tls_session_free(conn->tls);
	conn->tls = NULL;
	conn->handshaking = false;
	conn->tls_events = 0;
	conn->parked = false;
	free(conn->head);
	conn->head = NULL;
	strbuf_free(&conn->response);
	strbuf_init(&conn->response);
}

void server_free(struct server *server)
{
	if (!server)
		return;
	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++)
		server_close(&server->connections[i]);
	auth_free(server->auth);
	close(server->listen_fd);
	free(server->address);
	free(server);
}

/* ---- polling ---- */

int server_poll_fds(struct server *server, struct pollfd *fds)
{
	int count = 0;

	fds[count] = (struct pollfd){ server->listen_fd, POLLIN, 0 };
	server->poll_slots[count++] = SLOT_LISTENER;
	if (server->auth) {
		fds[count] = (struct pollfd){ auth_fd(server->auth), POLLIN, 0 };
		server->poll_slots[count++] = SLOT_AUTH;
	}
	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		const struct connection *conn = &server->connections[i];
		short events = conn->writing ? POLLOUT : POLLIN;
		if (conn->fd < 0)
			continue;
		if (conn->parked)
			events = 0;     /* only a hang-up is news */
		else if (conn->tls_events && !conn->draining)
			events = conn->tls_events;
		fds[count] = (struct pollfd){ conn->fd, events, 0 };
		server->poll_slots[count++] = i;
	}
	server->polled = count;
	return count;
}

/* When the connection is closed unless something happens: a writer also
 * when its client has taken nothing for SERVE_STALL_TIMEOUT_NS. */
static uint64_t server_deadline(const struct connection *conn)
{
	uint64_t stalled = conn->progress_ns + SERVE_STALL_TIMEOUT_NS;

	return conn->writing && stalled < conn->deadline_ns ? stalled : conn->deadline_ns;
}

int server_timeout_ms(const struct server *server, int cap)
{
	uint64_t now = monotonic_ns();
	int timeout = cap;

	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		const struct connection *conn = &server->connections[i];
		if (conn->fd < 0)
			continue;
		uint64_t deadline = server_deadline(conn);
		uint64_t left = deadline > now ? deadline - now : 0;
		int ms = (int)(left / 1000000ull) + 1;
		if (ms < timeout)
			timeout = ms;
	}
	return timeout;
}

/* ---- requests ---- */

/* Where the head ends ("\r\n\r\n", or "\n\n" from a lax client): the
 * offset just past it, or 0 while it is incomplete. */
static size_t server_head_end(const char *data, size_t length)
{
	for (size_t i = 0; i + 1 < length; i++) {
		if (data[i] != '\n')
			continue;
		if (data[i + 1] == '\n')
			return i + 2;
		if (data[i + 1] == '\r' && i + 2 < length && data[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static bool server_header_is(const char *line, size_t length, const char *name, const char **value)
{
	size_t name_length = strlen(name);

	if (length <= name_length || line[name_length] != ':' ||
	    strncasecmp(line, name, name_length) != 0)
		return false;
	*value = line + name_length + 1;
	while (**value == ' ' || **value == '\t')
		(*value)++;
	return true;
}

/* A case-insensitive search within [text, text + length). */
static bool server_contains(const char *text, size_t length, const char *word)
{
	size_t word_length = strlen(word);

	for (size_t i = 0; i + word_length <= length; i++)
		if (strncasecmp(text + i, word, word_length) == 0)
			return true;
	return false;
}

/* Reads the head (head_length bytes, ending in its blank line). Returns an
 * HTTP status when the request is malformed or too big, else 0. */
static int server_parse(char *head, size_t head_length, struct request *request)
{
	char *line = head, *end = head + head_length;
	int header_count = 0;

	memset(request, 0, sizeof(*request));
	for (size_t i = 0; i < head_length; i++)
		if (head[i] == '\0')
			return 400;
	/* request line: METHOD SP TARGET SP HTTP/1.x */
	char *eol = memchr(line, '\n', (size_t)(end - line));
	size_t length = (size_t)(eol - line);
	if (length && line[length - 1] == '\r')
		length--;
	char *space1 = memchr(line, ' ', length);
	char *space2 = space1 ? memchr(space1 + 1, ' ', length - (size_t)(space1 + 1 - line)) : NULL;
	if (!space1 || !space2 || space1 == line || space2 == space1 + 1 ||
	    (size_t)(space1 - line) >= sizeof(request->method))
		return 400;
	const char *version = space2 + 1;
	size_t version_length = length - (size_t)(version - line);
	if (version_length != 8 || strncmp(version, "HTTP/1.", 7) != 0 ||
	    (version[7] != '0' && version[7] != '1'))
		return version_length >= 5 && strncmp(version, "HTTP/", 5) == 0 ? 505 : 400;
	request->http10 = version[7] == '0';
	memcpy(request->method, line, (size_t)(space1 - line));
	for (const char *p = request->method; *p; p++)
		if (*p < 'A' || *p > 'Z')
			return 400;
	size_t target_length = (size_t)(space2 - space1 - 1);
	/* the query string does not choose anything here */
	char *query = memchr(space1 + 1, '?', target_length);
	if (query)
		target_length = (size_t)(query - space1 - 1);
	if (target_length >= sizeof(request->path))
		request->path_too_long = true;
	else
		memcpy(request->path, space1 + 1, target_length);

	for (line = eol + 1; line < end; line = eol + 1) {
		eol = memchr(line, '\n', (size_t)(end - line));
		length = (size_t)(eol - line);
		if (length && line[length - 1] == '\r')
			length--;
		if (length == 0)
			break;
		if (++header_count > SERVE_HEADERS_MAX)
			return 431;
		/* obsolete line folding, or no name */
		if (line[0] == ' ' || line[0] == '\t' || !memchr(line, ':', length) || line[0] == ':')
			return 400;
		const char *value;
		size_t value_length;
		if (server_header_is(line, length, "Content-Length", &value)) {
			value_length = length - (size_t)(value - line);
			if (value_length != 1 || value[0] != '0')
				request->has_body = true;
		} else if (server_header_is(line, length, "Transfer-Encoding", &value)) {
			request->has_body = true;
		} else if (server_header_is(line, length, "Connection", &value)) {
			value_length = length - (size_t)(value - line);
			if (server_contains(value, value_length, "close"))
				request->close = true;
		} else if (server_header_is(line, length, "Accept", &value)) {
			value_length = length - (size_t)(value - line);
			if (server_contains(value, value_length, "application/openmetrics-text"))
				request->openmetrics = true;
		} else if (server_header_is(line, length, "Authorization", &value)) {
			request->authorization = value;
			request->authorization_length = length - (size_t)(value - line);
		}
	}
	return 0;
}

static const char *server_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 414: return "URI Too Long";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

static const char server_index_page[] =
	"<!DOCTYPE html>\n"
	"<html><head><meta charset=\"utf-8\"><title>sonde</title></head>\n"
	"<body><h1>sonde</h1><p>A sonde program's maps, for Prometheus: "
	"<a href=\"/metrics\">/metrics</a></p></body></html>\n";

static void server_respond(struct connection *conn, int status, const char *content_type,
			   const char *body, size_t body_length, bool head_only, const char *extra)
{
	struct strbuf *out = &conn->response;

	strbuf_reset(out);
	strbuf_printf(out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n", status,
		      server_reason(status), content_type, body_length);
	if (extra)
		strbuf_puts(out, extra);
	if (conn->close_after)
		strbuf_puts(out, "Connection: close\r\n");
	strbuf_puts(out, "\r\n");
	if (!head_only && body_length)
		strbuf_append(out, body, body_length);
	conn->sent = 0;
	conn->writing = true;
	conn->tls_events = 0;
	conn->progress_ns = monotonic_ns();
	conn->deadline_ns = conn->progress_ns + SERVE_WRITE_TIMEOUT_NS;
}

static void server_respond_text(struct connection *conn, int status, const char *text,
				bool head_only, const char *extra)
{
	server_respond(conn, status, "text/plain; charset=utf-8", text, strlen(text), head_only, extra);
}

/* Is this a writer whose client has taken nothing for a while? */
static bool server_stalled(const struct connection *conn, uint64_t now)
{
	return conn->fd >= 0 && conn->writing && now - conn->progress_ns >= SERVE_STALL_EVICT_NS;
}

/* The memory a response holds until its last byte is sent: all of its
 * buffer, sent or not. */
static size_t server_pending(const struct connection *conn)
{
	return conn->fd >= 0 && conn->writing ? conn->response.capacity : 0;
}

/* Keeps the unsent responses within SERVE_PENDING_MAX once conn has a new
 * one: writers that have stopped reading make room, the largest first;
 * if that is not enough, conn's response becomes a 503 (unless it is the
 * only one). */
static void server_fit_pending(struct server *server, struct connection *conn, bool head_only)
{
	uint64_t now = monotonic_ns();

	for (;;) {
		size_t total = 0;
		struct connection *largest = NULL;
		for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
			struct connection *other = &server->connections[i];
			total += server_pending(other);
			if (other != conn && server_stalled(other, now) &&
			    (!largest || server_pending(other) > server_pending(largest)))
				largest = other;
		}
		/* a map larger than the budget is still served, alone */
		if (total <= SERVE_PENDING_MAX || total == server_pending(conn))
			return;
		if (!largest)
			break;
		server_close(largest);
	}
	conn->close_after = true;
	strbuf_free(&conn->response);
	strbuf_init(&conn->response);
	server_respond_text(conn, 503, "503 Service Unavailable: too many responses not yet read\n",
			    head_only, "Retry-After: 1\r\n");
}

/* Answers a complete request head; false when it is parked instead, its
 * credentials being checked. */
static bool server_answer(struct server *server, struct connection *conn, char *head,
			  size_t head_length)
{
	struct request request;
	int status = server_parse(head, head_length, &request);

	conn->close_after = status != 0 || request.http10 || request.close || request.has_body;
	if (status) {
		char *text = xasprintf("%d %s\n", status, server_reason(status));
		server_respond_text(conn, status, text, false, NULL);
		free(text);
		return true;
	}
	bool head_only = strcmp(request.method, "HEAD") == 0;
	switch (auth_check(server->auth, request.authorization, request.authorization_length,
			   conn->auth_digest)) {
	case AUTH_OK:
		break;
	case AUTH_WAIT:
		return false;
	case AUTH_DENIED:
		/* one bcrypt check per connection: a client guessing passwords
		 * must pay a new connection (and a TLS handshake) for each */
		if (conn->checked)
			conn->close_after = true;
		server_respond_text(conn, 401, "401 Unauthorized\n", head_only,
				    "WWW-Authenticate: Basic realm=\"sonde\", charset=\"UTF-8\"\r\n");
		return true;
	case AUTH_LIMITED:
		conn->close_after = true;
		server_respond_text(conn, 429, "429 Too Many Requests: too many new credentials to check\n",
				    head_only, "Retry-After: 1\r\n");
		return true;
	case AUTH_BUSY:
		conn->close_after = true;
		server_respond_text(conn, 503, "503 Service Unavailable: cannot check credentials\n",
				    head_only, "Retry-After: 1\r\n");
		return true;
	}
	if (!head_only && strcmp(request.method, "GET") != 0) {
		server_respond_text(conn, 405, "405 Method Not Allowed: use GET\n", false,
				    "Allow: GET, HEAD\r\n");
		return true;
	}
	if (request.path_too_long) {
		server_respond_text(conn, 414, "414 URI Too Long\n", head_only, NULL);
		return true;
	}
	if (strcmp(request.path, "/") == 0) {
		server_respond(conn, 200, "text/html; charset=utf-8", server_index_page,
			       sizeof(server_index_page) - 1, head_only, NULL);
		return true;
	}
	if (strcmp(request.path, "/metrics") != 0) {
		server_respond_text(conn, 404, "404 Not Found: the metrics are at /metrics\n",
				    head_only, NULL);
		return true;
	}
	struct strbuf body;
	strbuf_init(&body);
	int err = server->metrics ? metrics_render(server->metrics, &body, request.openmetrics) : 0;
	if (err) {
		char *text = xasprintf("500 cannot read the maps: %s\n", strerror(-err));
		server_respond_text(conn, 500, text, head_only, NULL);
		free(text);
	} else {
		server_respond(conn, 200,
			       request.openmetrics
				       ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
				       : "text/plain; version=0.0.4; charset=utf-8",
			       body.data ? body.data : "", body.length, head_only, NULL);
		server_fit_pending(server, conn, head_only);
	}
	strbuf_free(&body);
	return true;
}

/* Answers the request in the buffer if it is complete. */
static void server_try_answer(struct server *server, struct connection *conn)
{
	size_t end = server_head_end(conn->head, conn->received);

	if (end == 0) {
		if (conn->received >= SERVE_HEAD_MAX) {
			conn->close_after = true;
			server_respond_text(conn, 431, "431 Request Header Fields Too Large\n", false,
					    NULL);
		}
		return;
	}
	if (!server_answer(server, conn, conn->head, end)) {
		conn->parked = true;
		conn->checked = true;
		conn->progress_ns = monotonic_ns();
		return;
	}
	/* what follows is the next (pipelined) request */
	memmove(conn->head, conn->head + end, conn->received - end);
	conn->received -= end;
}

static void server_wait_for_request(struct connection *conn, uint64_t now)
{
	conn->writing = false;
	conn->tls_events = 0;
	conn->waiting_since_ns = now;
	conn->deadline_ns = now + SERVE_REQUEST_TIMEOUT_NS;
}

/* ---- sockets ---- */

/* How readily a connection is dropped for a newcomer when every slot is
 * taken: the lowest rank goes first, and within a rank the one that has
 * waited (for a request, or for its client to read) the longest. */
enum victim_rank {
	VICTIM_DRAINING,        /* answered; only waiting to close politely */
	VICTIM_STALLED,         /* its client has stopped reading its response */
	VICTIM_IDLE,            /* no request for SERVE_IDLE_EVICT_NS */
	VICTIM_PARKED,          /* a request waiting for its credentials' check */
	VICTIM_NEW,             /* waiting for a request it has only begun */
	VICTIM_WRITING,         /* a response the client is reading */
};

static enum victim_rank server_victim_rank(const struct connection *conn, uint64_t now,
					   uint64_t *since)
{
	if (conn->draining) {
		*since = 0;
		return VICTIM_DRAINING;
	}
	if (conn->writing) {
		*since = conn->progress_ns;
		return server_stalled(conn, now) ? VICTIM_STALLED : VICTIM_WRITING;
	}
	if (conn->parked) {
		*since = conn->progress_ns;
		return VICTIM_PARKED;
	}
	*since = conn->waiting_since_ns;
	return now - conn->waiting_since_ns >= SERVE_IDLE_EVICT_NS ? VICTIM_IDLE : VICTIM_NEW;
}

/* A free slot, or the connection to drop for a new one. */
static struct connection *server_slot(struct server *server)
{
	struct connection *victim = NULL;
	enum victim_rank victim_rank = VICTIM_WRITING;
	uint64_t victim_since = 0, now = monotonic_ns();

	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		struct connection *conn = &server->connections[i];
		uint64_t since;
		if (conn->fd < 0)
			return conn;
		enum victim_rank rank = server_victim_rank(conn, now, &since);
		if (!victim || rank < victim_rank || (rank == victim_rank && since < victim_since)) {
			victim = conn;
			victim_rank = rank;
			victim_since = since;
		}
	}
	server_close(victim);
	return victim;
}

static void server_accept(struct server *server)
{
	for (int round = 0; round < SERVE_ACCEPTS_PER_ROUND; round++) {
		int fd = accept4(server->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct connection *slot = server_slot(server);
		/* A response goes out in one write, but TLS writes session tickets
		 * first: with Nagle the response would wait for the client's
		 * delayed ACK of those (40 ms) */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		int send_buffer = SERVE_SEND_BUFFER;
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof(send_buffer));
		if (server->tls && !(slot->tls = tls_session_new(server->tls, fd))) {
			close(fd);
			continue;
		}
		slot->fd = fd;
		slot->handshaking = slot->tls != NULL;
		slot->head = xcalloc(1, SERVE_HEAD_MAX);
		slot->received = 0;
		slot->close_after = false;
		slot->checked = false;
		server_wait_for_request(slot, monotonic_ns());
	}
}

/* recv() or its TLS equivalent: bytes, 0 when the client closed, -EAGAIN
 * (poll again), or another -errno when the connection is lost. */
static ssize_t server_recv(struct connection *conn, void *data, size_t length)
{
	if (conn->tls) {
		ssize_t got = tls_recv(conn->tls, data, length, &conn->tls_events);
		if (got > 0)
			conn->tls_events = 0;
		return got;
	}
	ssize_t got = recv(conn->fd, data, length, MSG_DONTWAIT);
	if (got < 0)
		return errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	return got;
}

static ssize_t server_send(struct connection *conn, const void *data, size_t length)
{
	if (conn->tls) {
		ssize_t put = tls_send(conn->tls, data, length, &conn->tls_events);
		if (put > 0)
			conn->tls_events = 0;
		return put;
	}
	ssize_t put = send(conn->fd, data, length, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (put < 0)
		return errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -errno;
	return put;
}

static void server_discard(struct connection *conn)
{
	char sink[4096];
	ssize_t got = recv(conn->fd, sink, sizeof(sink), MSG_DONTWAIT);

	if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		server_close(conn);
}

/* Is the connection waiting for (more of) a request? */
static bool server_reading(const struct connection *conn)
{
	return conn->fd >= 0 && !conn->writing && !conn->parked && !conn->draining &&
	       !conn->handshaking;
}

static void server_read(struct server *server, struct connection *conn)
{
	/* TLS keeps what it decrypted beyond what was asked for, where poll()
	 * does not see it: read on while it holds some */
	do {
		ssize_t got = server_recv(conn, conn->head + conn->received,
					  SERVE_HEAD_MAX - conn->received);
		if (got == -EAGAIN)
			return;
		if (got <= 0) {
			server_close(conn);
			return;
		}
		conn->received += (size_t)got;
		server_try_answer(server, conn);
	} while (server_reading(conn) && conn->tls && conn->received < SERVE_HEAD_MAX &&
		 tls_has_pending(conn->tls));
}

/* After a response or a credential check: the next request, if it is in. */
static void server_next_request(struct server *server, struct connection *conn)
{
	if (conn->received)
		server_try_answer(server, conn);
	if (server_reading(conn) && conn->tls && tls_has_pending(conn->tls))
		server_read(server, conn);
}

static void server_write(struct server *server, struct connection *conn)
{
	while (conn->sent < conn->response.length) {
		ssize_t put = server_send(conn, conn->response.data + conn->sent,
					  conn->response.length - conn->sent);
		if (put == -EAGAIN)
			return;
		if (put <= 0) {
			server_close(conn);
			return;
		}
		conn->sent += (size_t)put;
		conn->progress_ns = monotonic_ns();
	}
	if (conn->close_after) {
		if (conn->tls)
			tls_close_notify(conn->tls);
		shutdown(conn->fd, SHUT_WR);
		conn->writing = false;
		conn->draining = true;
		conn->deadline_ns = monotonic_ns() + SERVE_LINGER_NS;
		return;
	}
	/* a scrape's buffer can be large: give it back between scrapes */
	strbuf_free(&conn->response);
	strbuf_init(&conn->response);
	server_wait_for_request(conn, monotonic_ns());
	server_next_request(server, conn);
}

/* One step of the TLS handshake. A client that speaks plain HTTP to the
 * TLS port is told so in plain HTTP, as Go's servers do, and closed. */
static void server_handshake(struct server *server, struct connection *conn)
{
	int done = tls_handshake(conn->tls, &conn->tls_events);

	if (done == -EAGAIN)
		return;
	if (done == -EPROTO) {
		tls_session_free(conn->tls);
		conn->tls = NULL;
		conn->handshaking = false;
		conn->close_after = true;
		server_respond_text(conn, 400,
				    "400 Bad Request: client sent an HTTP request to an HTTPS server\n",
				    false, NULL);
		return;
	}
	if (done < 0) {
		server_close(conn);
		return;
	}
	conn->handshaking = false;
	conn->tls_events = 0;
	/* the request may have come with the handshake's last flight */
	server_read(server, conn);
}

/* The checks that finished: their parked requests are answered. */
static void server_resume(struct server *server)
{
	if (!auth_collect(server->auth))
		return;
	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		struct connection *conn = &server->connections[i];
		if (conn->fd < 0 || !conn->parked || auth_waiting(server->auth, conn->auth_digest))
			continue;
		conn->parked = false;
		server_next_request(server, conn);
		if (conn->fd >= 0 && conn->writing && conn->sent == 0)
			server_write(server, conn);
	}
}

void server_handle(struct server *server, const struct pollfd *fds, int count)
{
	uint64_t handshake_ns = 0;

	if (count > server->polled)
		count = server->polled;
	/* start at a different descriptor each round, so that when the
	 * handshake budget runs out it is not always the same ones that wait */
	int start = count ? (int)(server->rounds++ % (unsigned)count) : 0;
	for (int n = 0; n < count; n++) {
		int i = (start + n) % count;
		int slot = server->poll_slots[i];
		if (!fds[i].revents)
			continue;
		if (slot == SLOT_LISTENER) {
			server_accept(server);
			continue;
		}
		if (slot == SLOT_AUTH) {
			server_resume(server);
			continue;
		}
		struct connection *conn = &server->connections[slot];
		if (conn->fd != fds[i].fd)
			continue;
		if (conn->parked) {
			if (fds[i].revents & (POLLERR | POLLHUP))
				server_close(conn);
			continue;
		}
		if (conn->handshaking) {
			if (handshake_ns >= SERVE_HANDSHAKE_BUDGET_NS)
				continue;       /* still ready next round */
			uint64_t began = monotonic_ns();
			server_handshake(server, conn);
			handshake_ns += monotonic_ns() - began;
		} else if (conn->writing) {
			server_write(server, conn);
		} else if (conn->draining) {
			server_discard(conn);
		} else {
			server_read(server, conn);
		}
		/* a response made from a read goes out at once if the socket takes it */
		if (conn->fd >= 0 && conn->writing && conn->sent == 0)
			server_write(server, conn);
	}
	uint64_t now = monotonic_ns();
	for (int i = 0; i < SERVE_MAX_CONNECTIONS; i++) {
		struct connection *conn = &server->connections[i];
		if (conn->fd >= 0 && now > server_deadline(conn))
			server_close(conn);
	}
}
