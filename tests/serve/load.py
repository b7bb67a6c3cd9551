# SPDX-License-Identifier: Apache-2.0
"""Clients for sonde serve's tests (tests/run_all.py, group serve) and its
benchmark (bench/run.py): paced scrapers, slowloris connections, malformed
requests, and a process's resident memory.

Everything here talks plain sockets or http.client to a loopback address;
nothing depends on sonde itself.
"""

import http.client
import os
import socket
import threading
import time


def rss_kb(pid):
    """VmRSS of a process in KiB (0 once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    """User plus system CPU time a process has used, in seconds."""
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / float(os.sysconf("SC_CLK_TCK"))


def percentile(values, share):
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def fetch(host, port, path="/metrics", headers=None, timeout=10):
    """One GET on a fresh connection: (status, headers dict, body text)."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", path, headers=headers or {})
        response = conn.getresponse()
        body = response.read().decode("utf-8", "replace")
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        conn.close()


def timed_scrape(host, port, path="/metrics", timeout=10):
    """One GET on a fresh connection, read with plain recv calls so the
    client adds little to the time: (seconds, status, body bytes). Raises
    OSError when the body is shorter than its Content-Length, or when the
    server is silent for `timeout` seconds."""
    t0 = time.monotonic()
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode())
        data = bytearray()
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    elapsed = time.monotonic() - t0
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    length = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")]
    if not length or len(body) != int(length[0].split(b":")[1]):
        raise OSError("incomplete response: %r, %d body bytes" % (head[:60], len(body)))
    return elapsed, status_of(head), body


class ScrapeLoad:
    """`clients` threads scraping /metrics over kept-alive connections,
    `rate` scrapes per second in all, for `seconds`. Records each scrape's
    latency (seconds) and every error."""

    def __init__(self, host, port, clients, rate, seconds, on_tick=None):
        self.host, self.port = host, port
        self.clients, self.rate, self.seconds = clients, rate, seconds
        self.latencies = []
        self.errors = []
        self.lock = threading.Lock()
        self.on_tick = on_tick

    def _client(self, index):
        interval = self.clients / float(self.rate)
        start = time.monotonic() + interval * index / self.clients
        conn = None
        n = 0
        while True:
            due = start + n * interval
            if due - self.began > self.seconds:
                break
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            n += 1
            t0 = time.monotonic()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
                conn.request("GET", "/metrics")
                response = conn.getresponse()
                body = response.read()
                if response.status != 200 or not body:
                    raise RuntimeError("status %d, %d bytes" % (response.status, len(body)))
                with self.lock:
                    self.latencies.append(time.monotonic() - t0)
            except Exception as error:  # every failure is a finding
                with self.lock:
                    self.errors.append("%s: %r" % (time.strftime("%H:%M:%S"), error))
                if conn is not None:
                    conn.close()
                conn = None
        if conn is not None:
            conn.close()

    def run(self):
        self.began = time.monotonic()
        threads = [threading.Thread(target=self._client, args=(i,), daemon=True)
                   for i in range(self.clients)]
        for thread in threads:
            thread.start()
        while any(thread.is_alive() for thread in threads):
            if self.on_tick:
                self.on_tick()
            time.sleep(0.5)
        for thread in threads:
            thread.join()
        return self

    def summary(self):
        lat = self.latencies
        return ("%d scrapes, %d errors, p50 %.2f ms, p99 %.2f ms, max %.2f ms"
                % (len(lat), len(self.errors), percentile(lat, 0.5) * 1000,
                   percentile(lat, 0.99) * 1000, max(lat or [0]) * 1000))


class Slowloris:
    """`count` connections that send a request head one byte at a time and
    never finish it. Counts how many the server has closed."""

    def __init__(self, host, port, count):
        self.sockets = []
        for _ in range(count):
            s = socket.create_connection((host, port), timeout=5)
            s.setblocking(False)
            self.sockets.append(s)
        self.text = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
        self.sent = 0
        self.closed = 0

    def tick(self):
        """Sends the next byte on every connection still open."""
        if self.sent >= len(self.text):
            return
        byte = self.text[self.sent:self.sent + 1]
        self.sent += 1
        alive = []
        for s in self.sockets:
            try:
                s.send(byte)
                alive.append(s)
            except (BlockingIOError, InterruptedError):
                alive.append(s)
            except OSError:
                self.closed += 1
                s.close()
        self.sockets = alive

    def close(self):
        for s in self.sockets:
            s.close()


def raw_exchange(host, port, data, read_timeout=5.0, linger=0.0):
    """Sends data as is and returns whatever comes back until the server
    closes or read_timeout passes (the status line is what matters)."""
    s = socket.create_connection((host, port), timeout=read_timeout)
    try:
        try:
            s.sendall(data)
        except OSError:
            pass
        if linger:
            time.sleep(linger)
        chunks = []
        deadline = time.monotonic() + read_timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and b"Content-Length: 0" not in chunks[0]:
                # the head is in; the body is not the point here
                text = b"".join(chunks)
                head, _, body = text.partition(b"\r\n\r\n")
                length = [line for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")]
                if length and len(body) >= int(length[0].split(b":")[1]):
                    break
        return b"".join(chunks)
    finally:
        s.close()


def status_of(reply):
    """The status code of an HTTP reply (0 when there is none)."""
    first = reply.split(b"\r\n", 1)[0].split()
    if len(first) >= 2 and first[0].startswith(b"HTTP/") and first[1].isdigit():
        return int(first[1])
    return 0


# The requests a server must refuse, and how: (name, bytes, expected status).
BAD_REQUESTS = [
    ("post", b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 405),
    ("delete", b"DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 405),
    ("other path", b"GET /secret HTTP/1.1\r\nHost: x\r\n\r\n", 404),
    ("no version", b"GET /metrics\r\n\r\n", 400),
    ("http/2.0", b"GET /metrics HTTP/2.0\r\nHost: x\r\n\r\n", 505),
    ("header without colon", b"GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", 400),
    ("folded header", b"GET /metrics HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n", 400),
    ("nul byte", b"GET /met\x00rics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("lower-case method", b"get /metrics HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("binary garbage", bytes(range(1, 256)) * 4 + b"\r\n\r\n", 400),
    ("oversized head", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000
     + b"\r\n\r\n", 431),
    ("too many headers", b"GET /metrics HTTP/1.1\r\n"
     + b"".join(b"X-H%d: v\r\n" % i for i in range(200)) + b"\r\n", 431),
    ("long path", b"GET /" + b"m" * 2000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414),
]
