/* SPDX-License-Identifier: Apache-2.0 */
/*
 * peak_rss FILE COMMAND [ARG...]: runs COMMAND and writes its peak resident
 * set (ru_maxrss, KiB) to FILE; exits with its status (128 + N for signal N).
 *
 * Why a helper: a child's ru_maxrss starts at what its parent's memory was
 * when it forked (exec keeps the larger of the two), so measured from the
 * test runner every small program looked as large as Python. This process
 * is small, so the number is the command's own.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peak_rss FILE COMMAND [ARG...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("peak_rss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("peak_rss: exec");
		_exit(127);
	}
	int status;
	struct rusage usage;
	if (wait4(pid, &status, 0, &usage) < 0) {
		perror("peak_rss: wait4");
		return 2;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out || fprintf(out, "%ld\n", usage.ru_maxrss) < 0 || fclose(out) != 0) {
		perror(argv[1]);
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
