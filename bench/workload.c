/* SPDX-License-Identifier: Apache-2.0 */
/*
 * workload.c - the event generator the benchmarks trace.
 *
 * The harness (bench/run.py) builds this with cc and runs it under a tracer.
 * It makes a known number of system calls so that a tracer's cost can be
 * divided by a known number of events, and so that lines printed by a tracer
 * can be compared with lines that should have been printed.
 *
 *     workload write N        N write(2)s to /dev/null, sizes 1..8192
 *     workload read N         N read(2)s from /dev/zero, sizes 1..8192
 *     workload open N         N openat(2)s of a few fixed paths (and closes)
 *     workload exec N         N fork(2)s, each child execve(2)ing /bin/true,
 *                             one after another (waited for)
 *     workload pingpong N     N round trips of one byte between two processes
 *                             over two pipes: every trip wakes each side once,
 *                             so at least two wake-ups and context switches
 *     workload close N        N close(-1)s (EBADF: the cheapest syscall there is to
 *                             make on purpose), in batches of 10,000; the line
 *                             printed at the end also gives the smallest thread
 *                             CPU time per call over the batches, in ns, so that
 *                             what a tracer adds to every syscall can be read
 *                             without the time other processes take
 *     workload getppid N RATE [SECONDS]
 *                             N getppid(2)s paced at RATE per second
 *                             (RATE 0: as fast as possible), stopping early
 *                             after SECONDS; a tracer that blocks the
 *                             generator then cannot stretch the run
 *
 * Before the first system call of the measured loop it waits for a line on
 * standard input, so that the harness can start it, attach a tracer, and then
 * release it. With "-n" it starts at once. When done it prints one line,
 * with the number of calls it really made:
 *
 *     done N SECONDS
 *
 * The sizes follow a fixed pseudo-random walk over 1..8192 so that hist()
 * and lhist() see many buckets, the same ones on every run.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE 8192

static char buffer[MAX_SIZE];

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static size_t size_for(long i)
{
	return 1 + (size_t)((i * 7919) % MAX_SIZE);
}

static int run_write(long count)
{
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return -1;
	for (long i = 0; i < count; i++)
		if (write(fd, buffer, size_for(i)) < 0)
			return -1;
	close(fd);
	return 0;
}

static int run_read(long count)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return -1;
	for (long i = 0; i < count; i++)
		if (read(fd, buffer, size_for(i)) < 0)
			return -1;
	close(fd);
	return 0;
}

static int run_open(long count)
{
	/* Paths of different lengths, all present on any Debian system. */
	static const char *const paths[] = {
		"/etc/hostname", "/etc/passwd", "/etc/os-release",
		"/usr/lib/os-release", "/proc/self/stat",
	};
	size_t npaths = sizeof(paths) / sizeof(paths[0]);

	for (long i = 0; i < count; i++) {
		int fd = open(paths[i % npaths], O_RDONLY);

		if (fd >= 0)
			close(fd);
	}
	return 0;
}

/* Returns the smallest thread CPU ns per call over batches of close(-1). */
static double run_close(long count)
{
	const long batch = 10000;
	double best = -1;

	for (long done = 0; done < count; done += batch) {
		struct timespec t0, t1;
		double ns;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		for (long i = 0; i < batch; i++)
			syscall(SYS_close, -1);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
		ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / batch;
		if (best < 0 || ns < best)
			best = ns;
	}
	return best;
}

static int run_exec(long count)
{
	static char *const argv[] = { "/bin/true", NULL };
	static char *const envp[] = { NULL };

	for (long i = 0; i < count; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			execve(argv[0], argv, envp);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return -1;
	}
	return 0;
}

static int run_pingpong(long count)
{
	int ping[2], pong[2];
	char byte = 'x';
	pid_t pid;
	int status;

	if (pipe(ping) < 0 || pipe(pong) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(ping[1]);
		close(pong[0]);
		while (read(ping[0], &byte, 1) == 1)
			if (write(pong[1], &byte, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(ping[0]);
	close(pong[1]);
	for (long i = 0; i < count; i++)
		if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1)
			return -1;
	close(ping[1]);
	close(pong[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return 0;
}

/*
 * Paced in small batches: after each batch, spin until the clock says the
 * next batch is due. Spinning rather than sleeping keeps the pace even at
 * rates where a sleep's wake-up latency would be larger than the gap.
 */
static long run_getppid(long count, double rate, double limit)
{
	const long batch = 64;
	double start = now_seconds();
	long i;

	for (i = 0; i < count; i++) {
		syscall(SYS_getppid);
		if ((i + 1) % batch != 0)
			continue;
		if (rate > 0) {
			double due = start + (i + 1) / rate;

			while (now_seconds() < due)
				;
		}
		if (limit > 0 && now_seconds() - start >= limit) {
			i++;
			break;
		}
	}
	return i;
}

static void __attribute__((noreturn)) usage(void)
{
	fprintf(stderr, "usage: workload [-n] write|read|open|close|exec|pingpong N | "
		"getppid N RATE [SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int wait_for_go = 1;
	int argi = 1;
	const char *mode;
	long count;
	double rate = 0, limit = 0;
	char line[64];
	double start, elapsed, close_ns = -1;
	int err;

	if (argi < argc && strcmp(argv[argi], "-n") == 0) {
		wait_for_go = 0;
		argi++;
	}
	if (argc - argi < 2)
		usage();
	mode = argv[argi];
	count = atol(argv[argi + 1]);
	if (argc - argi >= 3)
		rate = atof(argv[argi + 2]);
	if (argc - argi >= 4)
		limit = atof(argv[argi + 3]);
	memset(buffer, 'x', sizeof(buffer));

	if (wait_for_go && !fgets(line, sizeof(line), stdin))
		return 1;

	start = now_seconds();
	if (strcmp(mode, "write") == 0)
		err = run_write(count);
	else if (strcmp(mode, "read") == 0)
		err = run_read(count);
	else if (strcmp(mode, "open") == 0)
		err = run_open(count);
	else if (strcmp(mode, "close") == 0) {
		close_ns = run_close(count);
		err = 0;
	} else if (strcmp(mode, "exec") == 0)
		err = run_exec(count);
	else if (strcmp(mode, "pingpong") == 0)
		err = run_pingpong(count);
	else if (strcmp(mode, "getppid") == 0) {
		count = run_getppid(count, rate, limit);
		err = 0;
	}
	else
		usage();
	elapsed = now_seconds() - start;
	if (err) {
		perror("workload");
		return 1;
	}
	if (close_ns >= 0)
		printf("done %ld %.6f %.1f\n", count, elapsed, close_ns);
	else
		printf("done %ld %.6f\n", count, elapsed);
	return 0;
}
