/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for the network tools' tests: one loopback connection
 * whose addresses, ports and byte counts the test knows.
 *
 *   net_loopback [-u] [-o] [-w MS] [-l MS] ADDRESS PORT [SEND [REPLY]]
 *
 * Listens on ADDRESS:PORT (127.0.0.1 or ::1), connects to it from a second
 * socket of the same process, sends SEND bytes to the listener's side, which
 * answers with REPLY bytes; then the client closes first (the active close),
 * the accepted socket and the listener after it. -u does the same with UDP
 * sockets: the client connect()s, sends one datagram of SEND bytes and
 * receives one of REPLY bytes. -w waits MS milliseconds before starting (for
 * a `target:` started before the tracer); -l keeps the connection open MS
 * milliseconds before closing it (a lifetime to measure). -o overflows the
 * listener's accept queue instead (backlog 0, one connection queued, which
 * it waits to see): the second client's SYN is dropped and retransmitted
 * after a second; the process waits until the socket counts that
 * retransmit (at most 5 s, for a slow emulated guest) or, when the
 * handshake completed after all, 1.5 s. Copy the binary to a unique name:
 * the process name is what the cases filter on.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static void send_all(int fd, size_t count)
{
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	while (count > 0) {
		ssize_t n = send(fd, buf, count < sizeof(buf) ? count : sizeof(buf), 0);
		if (n < 0)
			die("send");
		count -= (size_t)n;
	}
}

static void recv_all(int fd, size_t count)
{
	char buf[4096];
	while (count > 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			die("recv");
		count -= (size_t)n;
	}
}

int main(int argc, char **argv)
{
	int udp = 0, overflow = 0, opt;
	long wait_ms = 0, linger_ms = 0;
	while ((opt = getopt(argc, argv, "uow:l:")) != -1) {
		if (opt == 'u')
			udp = 1;
		else if (opt == 'o')
			overflow = 1;
		else if (opt == 'w')
			wait_ms = atol(optarg);
		else if (opt == 'l')
			linger_ms = atol(optarg);
		else
			return 2;
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: net_loopback [-u] [-o] [-w MS] [-l MS] ADDRESS PORT [SEND [REPLY]]\n");
		return 2;
	}
	const char *address = argv[optind];
	int port = atoi(argv[optind + 1]);
	size_t send_bytes = argc - optind > 2 ? strtoul(argv[optind + 2], NULL, 10) : 0;
	size_t reply_bytes = argc - optind > 3 ? strtoul(argv[optind + 3], NULL, 10) : 0;
	sleep_ms(wait_ms);

	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof(ss));
	int family = strchr(address, ':') ? AF_INET6 : AF_INET;
	if (family == AF_INET6) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((unsigned short)port);
		if (inet_pton(AF_INET6, address, &sin6->sin6_addr) != 1)
			die("address");
		len = sizeof(*sin6);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((unsigned short)port);
		if (inet_pton(AF_INET, address, &sin->sin_addr) != 1)
			die("address");
		len = sizeof(*sin);
	}
	int type = udp ? SOCK_DGRAM : SOCK_STREAM, one = 1;
	int server = socket(family, type, 0);
	if (server < 0)
		die("socket");
	setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(server, (struct sockaddr *)&ss, len) < 0)
		die("bind");
	if (!udp && listen(server, overflow ? 0 : 1) < 0)
		die("listen");
	int client = socket(family, type, 0);
	if (client < 0)
		die("socket");
	if (connect(client, (struct sockaddr *)&ss, len) < 0)
		die("connect");

	if (overflow) {
		/* the first connection must be in the accept queue before the
		 * second SYN comes: a listener still completing it takes the SYN,
		 * and then drops its final ACK instead, which tcpretrans does not
		 * see (seen in the emulated guest) */
		struct pollfd queued = { .fd = server, .events = POLLIN };
		if (poll(&queued, 1, 5000) != 1)
			die("poll");
		int second = socket(family, type | SOCK_NONBLOCK, 0);
		connect(second, (struct sockaddr *)&ss, len);
		for (int waited = 0; waited < 5000; waited += 50) {
			struct tcp_info info;
			socklen_t info_len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (getsockopt(second, IPPROTO_TCP, TCP_INFO, &info, &info_len) < 0)
				die("getsockopt");
			if (info.tcpi_total_retrans > 0 ||
			    (info.tcpi_state == TCP_ESTABLISHED && waited >= 1500))
				break;
			sleep_ms(50);
		}
		sleep_ms(50);
		return 0;
	}
	if (udp) {
		char buf[65536];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		if (send(client, buf, send_bytes, 0) < 0)
			die("send");
		if (recvfrom(server, buf, sizeof(buf), 0, (struct sockaddr *)&from, &from_len) < 0)
			die("recvfrom");
		if (sendto(server, buf, reply_bytes, 0, (struct sockaddr *)&from, from_len) < 0)
			die("sendto");
		if (recv(client, buf, sizeof(buf), 0) < 0)
			die("recv");
		sleep_ms(linger_ms);
		close(client);
		close(server);
		return 0;
	}
	int accepted = accept(server, NULL, NULL);
	if (accepted < 0)
		die("accept");
	send_all(client, send_bytes);
	recv_all(accepted, send_bytes);
	send_all(accepted, reply_bytes);
	recv_all(client, reply_bytes);
	sleep_ms(linger_ms);
	close(client);
	sleep_ms(50);
	close(accepted);
	close(server);
	sleep_ms(50);
	return 0;
}
