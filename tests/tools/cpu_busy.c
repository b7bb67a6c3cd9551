/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Event generator for the run-queue tools (runqlat, runqslower, cpudist,
 * runqlen): N threads (argv[1], default 2) spin for MS milliseconds
 * (argv[2], default 500), all pinned to CPU 0, so that each waits in the
 * run queue while another runs: run-queue delays of the order of the
 * scheduler's time slice (milliseconds), a run queue one deep or more.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

static struct timespec deadline;

static int before_deadline(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < deadline.tv_sec ||
	       (now.tv_sec == deadline.tv_sec && now.tv_nsec < deadline.tv_nsec);
}

static void *spin(void *unused)
{
	(void)unused;
	while (before_deadline())
		;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	long ms = argc > 2 ? atol(argv[2]) : 500;
	cpu_set_t cpus;
	pthread_t ids[64];

	if (threads < 1 || threads > 64)
		return 2;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	for (int i = 0; i < threads; i++)
		pthread_create(&ids[i], NULL, spin, NULL);
	for (int i = 0; i < threads; i++)
		pthread_join(ids[i], NULL);
	return 0;
}
