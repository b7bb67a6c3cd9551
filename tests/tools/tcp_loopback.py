# SPDX-License-Identifier: Apache-2.0
"""Event generator for the array tests: one TCP connection to each
ADDRESS PORT pair given (IPv4 or IPv6 literals, e.g. 127.0.0.1 23451 ::1
23452), one after another. Each listens, connects, accepts and closes both
ends, so sock:inet_sock_set_state reports the whole life of a connection
whose addresses and port the test knows."""
import socket
import sys


def connect_once(address, port):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port))
        listener.listen(1)
        with socket.create_connection((address, port)) as client:
            accepted, _ = listener.accept()
            accepted.close()


def main():
    words = sys.argv[1:]
    if not words or len(words) % 2:
        sys.exit("usage: tcp_loopback.py ADDRESS PORT [ADDRESS PORT]...")
    for i in range(0, len(words), 2):
        connect_once(words[i], int(words[i + 1]))


if __name__ == "__main__":
    main()
